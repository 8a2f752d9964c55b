package datasets

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syntheticHash is the SHA-256 of everything a generated data set holds:
// labels, groups, edges, features (their bits) and split.
func syntheticHash(ds *Dataset) string {
	h := sha256.New()
	put := func(v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	ints := func(xs []int) {
		put(uint64(len(xs)))
		for _, x := range xs {
			put(uint64(x))
		}
	}
	ints(ds.Labels)
	ints(ds.Sens)
	for _, e := range ds.Graph.Edges() {
		put(uint64(e[0]))
		put(uint64(e[1]))
	}
	put(uint64(len(ds.Features)))
	for _, x := range ds.Features {
		put(math.Float64bits(x))
	}
	ints(ds.Split.Train)
	ints(ds.Split.Val)
	ints(ds.Split.Test)
	h.Write([]byte(ds.Name))
	return hex.EncodeToString(h.Sum(nil))
}

// TestSyntheticBinaryUnchanged: the binary generator's output, digit for
// digit, as it was before the class count was added (the hashes were
// recorded on the code before that change): the default config, three
// groups, an empty block, and SyntheticLarge's labels, groups, graph and
// split.
func TestSyntheticBinaryUnchanged(t *testing.T) {
	three := DefaultSyntheticConfig()
	three.GroupFrac, three.GroupFracs, three.N = 0, []float64{0.5, 0.3, 0.2}, 600
	empty := DefaultSyntheticConfig()
	empty.LabelBias, empty.N = 1, 500
	for _, c := range []struct {
		name string
		cfg  SyntheticConfig
		want string
	}{
		{"default", DefaultSyntheticConfig(), "2ba3c0c9291f91f8dc67655e81c9da8f5d960feb87c674d6cc7509e25256b2ea"},
		{"three groups", three, "1b888e859fecd30c7e8a7a35d57d7ad329d4f08108dce7dee07fd0a2dd2a461c"},
		{"empty blocks", empty, "44e5b42446f5dcd9accf4afede388d9d8392012250e8849a126c34d6cd39627d"},
	} {
		ds, err := Synthetic(c.cfg)
		require.NoError(t, err)
		assert.Equal(t, c.want, syntheticHash(ds), c.name)
	}
	cfg := DefaultSyntheticConfig()
	cfg.N = 3000
	ds, err := SyntheticLarge(cfg, t.TempDir()+"/x.feat", nil)
	require.NoError(t, err)
	assert.Equal(t, "a5500c3d5796edaf2b3d04a85052164ba3ab4f6bf17f8f1e5aabcee3528da3e1", syntheticHash(ds), "SyntheticLarge")
}
