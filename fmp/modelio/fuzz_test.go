package modelio_test

import (
	"bytes"
	"crypto/sha256"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
)

// FuzzLoadResealed fuzzes what lies behind the checksum (FuzzLoad's
// mutations almost never get past it): the input is a file without its
// checksum, which the harness appends, so every mutation of the header,
// the configuration (nested ones included) and the parameters reaches
// the decoder. Seeds: a valid file of every kind of the registry (fmp's
// wrapper included), float32 and float64. No input may make Load or Read
// panic, return a nil model without an error, or allocate more than a
// small multiple of its size.
func FuzzLoadResealed(f *testing.F) {
	p := problem.New(f, 21, 24, 3, 2, 40, 0.5)
	names := make([]string, 0, len(roundTripModels))
	for k := range roundTripModels {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, kind := range names {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			task := newTask(f, p, dt, layers.NewPhase())
			m, err := roundTripModels[kind](task.Graph, p, dt, task.Phase)
			require.NoError(f, err)
			var buf bytes.Buffer
			require.NoError(f, saveUntrained(&buf, m))
			f.Add(buf.Bytes()[:buf.Len()-sha256.Size])
		}
	}
	env := modelio.Env{Graph: p.Graph, Sens: alternating(p.N)}
	f.Fuzz(func(t *testing.T, b []byte) {
		sum := sha256.Sum256(b)
		file := append(append([]byte(nil), b...), sum[:]...)
		var m layers.Model
		var err error
		n := allocated(func() {
			m, err = modelio.Load(bytes.NewReader(file), G.NewGraph(), env)
		})
		if err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
		if err != nil && n > uint64(64<<20)+uint64(16*len(b)) {
			t.Fatalf("a failed load of %d bytes allocated %d bytes: %v", len(b), n, err)
		}
		var rf *modelio.File
		n = allocated(func() { rf, err = modelio.Read(bytes.NewReader(file)) })
		if err == nil && rf == nil {
			t.Fatal("nil file without an error")
		}
		if n > uint64(64<<20)+uint64(16*len(b)) {
			t.Fatalf("Read of %d bytes allocated %d bytes (%v)", len(b), n, err)
		}
	})
}
