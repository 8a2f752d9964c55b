package modelio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
)

// savedFMP saves a small float64 FMP model on a GCN backbone.
func savedFMP(t testing.TB) ([]byte, *problem.Problem) {
	t.Helper()
	p := problem.New(t, 26, 30, 4, 2, 50, 0.5)
	g, _ := p.Features(t, tensor.Float64)
	gcn, err := layers.NewGCN(g, p.Graph, layers.DefaultGCNConfig(p.D, p.C), nil)
	require.NoError(t, err)
	fc := fmp.DefaultOnConfig()
	fc.FMP.LambdaF = 16
	fm, err := fmp.On(gcn, p.Graph, alternating(p.N), fc, nil)
	require.NoError(t, err)
	require.NoError(t, recordFMP(fm, p))
	var buf bytes.Buffer
	require.NoError(t, saveUntrained(&buf, fm))
	return buf.Bytes(), p
}

// replaceHeader replaces old by new in data's header (once) and reseals.
func replaceHeader(t testing.TB, data []byte, old, new string) []byte {
	t.Helper()
	hdr, params, _ := split(t, data)
	require.Contains(t, string(hdr), old)
	return seal(bytes.Replace(hdr, []byte(old), []byte(new), 1), params)
}

// Duplicate keys are refused at every level, naming the key: with
// encoding/json alone the last one wins ("lambda_f":16,"lambda_f":0 ran
// with λf 0 on 74c2ae1).
func TestLoadRefusesDuplicateKeys(t *testing.T) {
	gcn, p := savedGCN(t)
	fm, pf := savedFMP(t)
	hdr, _, _ := split(t, fm)
	require.Contains(t, string(hdr), `"lambda_f":16`)
	cases := []struct {
		name string
		data []byte
		env  modelio.Env
		key  string
	}{
		{"header", replaceHeader(t, gcn, `"kind":"gcn",`, `"kind":"gcn","kind":"gcn",`), modelio.Env{Graph: p.Graph}, `"kind"`},
		{"config", replaceHeader(t, gcn, `"hidden":6`, `"hidden":6,"hidden":6`), modelio.Env{Graph: p.Graph}, `"hidden"`},
		{"graph", replaceHeader(t, gcn, `"nodes":30`, `"nodes":30,"nodes":30`), modelio.Env{Graph: p.Graph}, `"nodes"`},
		{"params", replaceHeader(t, gcn, `"name":"gcn.0.W"`, `"name":"gcn.0.W","name":"gcn.0.W"`), modelio.Env{Graph: p.Graph}, `"name"`},
		{"fmp config", replaceHeader(t, fm, `"lambda_f":16`, `"lambda_f":16,"lambda_f":0`), modelio.Env{Graph: pf.Graph, Sens: alternating(pf.N)}, `"lambda_f"`},
		{"backbone config", replaceHeader(t, fm, `"dropout":`, `"dropout":0.5,"dropout":`), modelio.Env{Graph: pf.Graph, Sens: alternating(pf.N)}, `"dropout"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := modelio.Load(bytes.NewReader(c.data), G.NewGraph(), c.env)
			require.Error(t, err)
			assert.ErrorIs(t, err, modelio.ErrFormat)
			assert.ErrorContains(t, err, "duplicate key "+c.key)
			_, err = modelio.Read(bytes.NewReader(c.data))
			assert.ErrorContains(t, err, "duplicate key "+c.key, "Read")
		})
	}
}

// A configuration key that is missing is refused, naming it, at every
// level: encoding/json alone leaves the field zero (λf 0 for a missing
// "lambda_f").
func TestLoadRefusesMissingConfigKeys(t *testing.T) {
	gcn, p := savedGCN(t)
	fm, pf := savedFMP(t)
	del := func(path ...string) func(h map[string]any) {
		return func(h map[string]any) {
			m := h
			for _, k := range path[:len(path)-1] {
				m = m[k].(map[string]any)
			}
			_, ok := m[path[len(path)-1]]
			require.True(t, ok, "%v", path)
			delete(m, path[len(path)-1])
		}
	}
	envF := modelio.Env{Graph: pf.Graph, Sens: alternating(pf.N)}
	cases := []struct {
		name string
		data []byte
		env  modelio.Env
		key  string
	}{
		{"gcn dropout", withHeader(t, gcn, del("config", "dropout")), modelio.Env{Graph: p.Graph}, `"dropout"`},
		{"gcn nested", withHeader(t, gcn, del("config", "activation", "alpha")), modelio.Env{Graph: p.Graph}, `"alpha"`},
		{"fmp lambda_f", withHeader(t, fm, del("config", "fmp", "lambda_f")), envF, `"lambda_f"`},
		{"backbone hidden", withHeader(t, fm, del("backbone", "config", "hidden")), envF, `"hidden"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := modelio.Load(bytes.NewReader(c.data), G.NewGraph(), c.env)
			require.Error(t, err)
			assert.ErrorIs(t, err, modelio.ErrFormat)
			assert.ErrorContains(t, err, "no key "+c.key)
		})
	}
}

// writeSparse writes data to a file and extends it with a hole to size
// bytes: a file that holds zeros it takes no disk for.
func writeSparse(t *testing.T, data []byte, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.fmp")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	require.NoError(t, os.Truncate(path, size))
	return path
}

// loadFile loads path and returns the error and the bytes allocated.
func loadFile(t *testing.T, path string, env modelio.Env) (error, uint64) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	n := allocated(func() { _, err = modelio.Load(f, G.NewGraph(), env) })
	return err, n
}

// Memory is bounded by what the configuration implies, not by what the
// header announces or by the file's size: on 74c2ae1 a sparse file whose
// header announced 512 MiB of parameters allocated them all (and a 2 GiB
// one ran out of memory under a 4 GB address-space limit), and so did a
// configuration implying more than any model this release loads.
func TestLoadSparseFileBounded(t *testing.T) {
	data, p := savedGCN(t)
	env := modelio.Env{Graph: p.Graph}
	announced := withHeader(t, data, func(h map[string]any) {
		h["params"].([]any)[0].(map[string]any)["shape"] = []int{1 << 12, 1 << 15} // 512 MiB of float32
	})
	err, n := loadFile(t, writeSparse(t, announced, 600<<20), env)
	require.Error(t, err)
	assert.ErrorIs(t, err, modelio.ErrCorrupt, "the zeros after the header are not the announced file")
	assert.Less(t, n, uint64(4<<20), "bytes allocated")

	huge := withHeader(t, data, func(h map[string]any) {
		c := h["config"].(map[string]any)
		c["in"], c["hidden"] = 1<<14, 1<<14 // 1 GiB of float32 in the first layer alone
		ps := h["params"].([]any)
		ps[0].(map[string]any)["shape"] = []int{1 << 14, 1 << 14}
		ps[1].(map[string]any)["shape"] = []int{1, 1 << 14}
		ps[2].(map[string]any)["shape"] = []int{1 << 14, 2}
	})
	err, n = loadFile(t, writeSparse(t, huge, 1100<<20), env)
	require.Error(t, err)
	assert.ErrorContains(t, err, "more than")
	assert.Less(t, n, uint64(4<<20), "bytes allocated")
}

// A stream of zeros after a valid header (a pipe, a network stream) is
// refused after a bounded read, allocating little, whether the header
// matches its configuration or announces 512 MiB.
func TestLoadEndlessStream(t *testing.T) {
	data, p := savedGCN(t)
	env := modelio.Env{Graph: p.Graph}
	announced := withHeader(t, data, func(h map[string]any) {
		h["params"].([]any)[0].(map[string]any)["shape"] = []int{1 << 12, 1 << 15}
	})
	for name, d := range map[string][]byte{"valid header": data, "header announcing 512 MiB": announced} {
		hdr, _, _ := split(t, d)
		z := &zeros{}
		var err error
		n := allocated(func() {
			_, err = modelio.Load(io.MultiReader(bytes.NewReader(append(hdr, '\n')), z), G.NewGraph(), env)
		})
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, modelio.ErrCorrupt) || errors.Is(err, modelio.ErrFormat), "%s: %v", name, err)
		assert.Less(t, n, uint64(4<<20), "%s: bytes allocated", name)
		assert.LessOrEqual(t, z.n, 1<<30+(1<<20), "%s: bytes read", name)
	}
}

// A damaged header is reported as damage (ErrCorrupt), never as what the
// damaged text would mean (an unknown key, a schema or shape mismatch, an
// unknown kind): every single-byte change of the header that leaves it
// JSON with its format and version is detected as corruption.
func TestCorruptHeaderIsCorrupt(t *testing.T) {
	data, p := savedGCN(t)
	var buf bytes.Buffer
	m, err := modelio.Load(bytes.NewReader(data), G.NewGraph(), modelio.Env{Graph: p.Graph})
	require.NoError(t, err)
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true, Features: testSchema()}))
	data = buf.Bytes()
	nl := bytes.IndexByte(data, '\n')
	checked := 0
	for i := 0; i < nl; i++ {
		for _, bit := range []byte{1, 2, 4} {
			bad := append([]byte(nil), data...)
			bad[i] ^= bit
			var h struct {
				Format  string
				Version json.RawMessage
			}
			if json.Unmarshal(bad[:nl], &h) != nil || h.Format != modelio.FormatName || string(h.Version) != "3" {
				continue
			}
			checked++
			_, err := modelio.Load(bytes.NewReader(bad), G.NewGraph(), modelio.Env{Graph: p.Graph})
			if !errors.Is(err, modelio.ErrCorrupt) {
				t.Errorf("byte %d (%q) ^ %d: %v, want ErrCorrupt", i, data[i], bit, err)
			}
		}
	}
	t.Logf("%d damaged headers checked", checked)
	assert.Greater(t, checked, 100)
}

func testSchema() *features.Schema {
	return &features.Schema{Names: []string{"a", "b", "c", "d"}}
}

// TestLoadRefusesFromFileSize is issue 53's C3: a file whose size (an
// *os.File's, a bytes.Reader's) is not what its header announces is
// refused before a byte of parameters is read, with both sizes named. On
// 8baef3f a 4 KB sparse file of 1 GiB announcing 1 GiB of parameters was
// read (and its zeros decoded and hashed) to its end first: 10 to 19 s.
// A file read from an offset is measured from there.
func TestLoadRefusesFromFileSize(t *testing.T) {
	data, p := savedGCN(t)
	env := modelio.Env{Graph: p.Graph}
	in, hidden := 1<<14, 1<<14-8
	gib := withHeader(t, data, func(h map[string]any) {
		c := h["config"].(map[string]any)
		c["in"], c["hidden"] = in, hidden
		ps := h["params"].([]any)
		ps[0].(map[string]any)["shape"] = []int{in, hidden}
		ps[1].(map[string]any)["shape"] = []int{1, hidden}
		ps[2].(map[string]any)["shape"] = []int{hidden, 2}
	})
	hdr, _, _ := split(t, gib)
	params := 4 * (in*hidden + hidden + 2*hidden + 2) // float32
	require.Greater(t, params, 1<<30-(1<<20), "about 1 GiB announced")
	require.LessOrEqual(t, params, modelio.MaxParamBytes, "a size this release loads")
	announced := len(hdr) + 1 + params + 32
	head := append(append([]byte{}, hdr...), '\n')
	head = append(head, make([]byte, 4096)...)

	path := writeSparse(t, head, 1000<<20) // 4 KB of data, a hole to 1000 MiB
	err, n := loadFile(t, path, env)
	require.Error(t, err)
	assert.ErrorIs(t, err, modelio.ErrCorrupt)
	assert.ErrorContains(t, err, fmt.Sprintf("the file has %d bytes, its header announces %d", 1000<<20, announced))
	assert.ErrorContains(t, err, "truncated")
	assert.Less(t, n, uint64(4<<20), "bytes allocated")

	// A valid file extended by a hole, and one cut short in memory.
	err, _ = loadFile(t, writeSparse(t, data, 64<<20), env)
	assert.ErrorIs(t, err, modelio.ErrCorrupt)
	assert.ErrorContains(t, err, fmt.Sprintf("the file has %d bytes, its header announces %d", 64<<20, len(data)))
	assert.ErrorContains(t, err, "data continues after the checksum")
	_, err = modelio.Read(bytes.NewReader(data[:len(data)-10]))
	assert.ErrorIs(t, err, modelio.ErrCorrupt)
	assert.ErrorContains(t, err, fmt.Sprintf("the file has %d bytes, its header announces %d", len(data)-10, len(data)))

	// A header that cannot be interpreted (a parameter of 512 MiB its
	// configuration does not build) on a file longer than any model file
	// with that header: refused without hashing it.
	bad := withHeader(t, data, func(h map[string]any) {
		h["params"].([]any)[0].(map[string]any)["shape"] = []int{1 << 12, 1 << 15}
	})
	bh, _, _ := split(t, bad)
	err, _ = loadFile(t, writeSparse(t, bad, 1100<<20), env)
	assert.ErrorIs(t, err, modelio.ErrCorrupt)
	assert.ErrorContains(t, err, fmt.Sprintf("the file has %d bytes, more than any model file with this header holds (%d)", 1100<<20, len(bh)+1+modelio.MaxParamBytes+96))

	// The size counts from where the reader is: a model after 5 other
	// bytes, read from there, loads.
	pre := filepath.Join(t.TempDir(), "after5.bin")
	require.NoError(t, os.WriteFile(pre, append([]byte("12345"), data...), 0o644))
	f, err := os.Open(pre)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Seek(5, io.SeekStart)
	require.NoError(t, err)
	_, err = modelio.Load(f, G.NewGraph(), env)
	assert.NoError(t, err)
}
