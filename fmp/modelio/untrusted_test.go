package modelio_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"io"
	"math/rand"
	"runtime"
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

// allocated returns the bytes f allocates (the heap's cumulative
// allocation count around it; no collection needed).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Files from an untrusted source: memory is bounded by what the
// configuration implies (the header's parameter list is compared with it
// before a byte of parameters is read), and every configuration value is checked against limits
// and against the parameter shapes before anything is built. On df69dad
// the first case allocated 16 GiB (a crash under a memory limit) and the
// second built a model of 2^40 hidden units.
func TestLoadUntrustedBounds(t *testing.T) {
	data, p := savedGCN(t)
	env := modelio.Env{Graph: p.Graph}
	cases := []struct {
		name string
		data []byte
		is   error
		want string
	}{
		{"a short file announcing a huge parameter", withHeader(t, data, func(h map[string]any) {
			h["params"].([]any)[0].(map[string]any)["shape"] = []int{1 << 15, 1 << 15} // 4 GiB of float32
		}), modelio.ErrMismatch, `parameter 0 ("gcn.0.W") has shape [32768 32768] in the file, its gcn configuration builds [4 6]`},
		{"hidden 2^40, resealed", withHeader(t, data, func(h map[string]any) {
			h["config"].(map[string]any)["hidden"] = 1 << 40
		}), modelio.ErrMismatch, "its gcn configuration builds [4 1099511627776]"},
		{"hidden 2^40 with matching announced shapes, resealed", withHeader(t, data, func(h map[string]any) {
			h["config"].(map[string]any)["hidden"] = 1 << 40
			ps := h["params"].([]any)
			ps[0].(map[string]any)["shape"] = []int{4, 1 << 40}
		}), modelio.ErrFormat, "has shape"},
		{"layers 10^6, resealed", withHeader(t, data, func(h map[string]any) {
			h["config"].(map[string]any)["layers"] = 1000000
		}), modelio.ErrFormat, "Layers = 1000000, want at most 1000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = modelio.Load(bytes.NewReader(c.data), G.NewGraph(), env) })
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			assert.ErrorContains(t, err, c.want)
			assert.Less(t, n, uint64(8<<20), "bytes allocated for a %d-byte file", len(c.data))
		})
	}
}

// Step counts are bounded (layers.MaxSteps): a resealed SGC, APPNP or
// FMP file asking for 10^7 steps (more than a minute of prediction on
// df69dad) is refused before building.
func TestLoadStepLimit(t *testing.T) {
	p := problem.New(t, 26, 30, 4, 2, 50, 0.5)
	g, _ := p.Features(t, tensor.Float64)
	sgc := layers.DefaultSGCConfig(p.D, p.C)
	ms, err := layers.NewSGC(g, p.Graph, sgc, nil)
	require.NoError(t, err)
	mlp, err := layers.NewMLP(g, nil, layers.DefaultMLPConfig(p.D, p.C), nil)
	require.NoError(t, err)
	fm, err := fmp.On(mlp, p.Graph, alternating(p.N), fmp.DefaultOnConfig(), nil)
	require.NoError(t, err)
	require.NoError(t, recordFMP(fm, p))
	for name, c := range map[string]struct {
		m    layers.Model
		edit func(h map[string]any)
	}{
		"sgc": {ms, func(h map[string]any) { h["config"].(map[string]any)["k"] = 10000000 }},
		"fmp": {fm, func(h map[string]any) { h["config"].(map[string]any)["fmp"].(map[string]any)["k"] = 10000000 }},
	} {
		var buf bytes.Buffer
		require.NoError(t, saveUntrained(&buf, c.m))
		_, err := modelio.Load(bytes.NewReader(withHeader(t, buf.Bytes(), c.edit)), G.NewGraph(), modelio.Env{Graph: p.Graph, Sens: alternating(p.N)})
		assert.ErrorIs(t, err, modelio.ErrFormat, name)
		assert.ErrorContains(t, err, "K = 10000000, want", name)
	}
}

// zeros is an endless stream of zero bytes (/dev/zero), counting reads.
type zeros struct{ n int }

func (z *zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	z.n += len(p)
	return len(p), nil
}

// A header is read in at most 1 MiB: /dev/zero is refused after reading
// about that much (the own-data command read 1 GB of it on df69dad).
func TestReadHeaderBounded(t *testing.T) {
	for name, f := range map[string]func(io.Reader) error{
		"ReadHeader": func(r io.Reader) error { _, err := modelio.ReadHeader(r); return err },
		"Load":       func(r io.Reader) error { _, err := modelio.Load(r, G.NewGraph(), modelio.Env{}); return err },
	} {
		z := &zeros{}
		err := f(z)
		assert.ErrorIs(t, err, modelio.ErrFormat, name)
		assert.ErrorContains(t, err, "no newline in the first", name)
		assert.Less(t, z.n, 2<<20, "%s read %d bytes", name, z.n)
	}
}

// Signed files: Load with trusted keys accepts a file signed by one of
// them and refuses an unsigned file, another key's, and a changed
// signature; without keys a signed file loads as any file.
func TestSignedFiles(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	pub, priv, err := ed25519.GenerateKey(rng)
	require.NoError(t, err)
	otherPub, otherPriv, err := ed25519.GenerateKey(rng)
	require.NoError(t, err)
	plain, p := savedGCN(t)
	m, err := modelio.Load(bytes.NewReader(plain), G.NewGraph(), modelio.Env{Graph: p.Graph})
	require.NoError(t, err)
	sign := func(key ed25519.PrivateKey) []byte {
		var buf bytes.Buffer
		cfg := modelio.DefaultSaveConfig()
		cfg.SigningKey, cfg.Untrained = key, true
		require.NoError(t, modelio.Save(&buf, m, cfg))
		return buf.Bytes()
	}
	signed := sign(priv)
	trusted := modelio.Env{Graph: p.Graph, TrustedKeys: []ed25519.PublicKey{otherPub, pub}}
	_, err = modelio.Load(bytes.NewReader(signed), G.NewGraph(), trusted)
	assert.NoError(t, err, "signed by a trusted key")
	_, err = modelio.Load(bytes.NewReader(signed), G.NewGraph(), modelio.Env{Graph: p.Graph})
	assert.NoError(t, err, "a signed file without trusted keys")
	_, err = modelio.Load(bytes.NewReader(plain), G.NewGraph(), trusted)
	assert.ErrorIs(t, err, modelio.ErrSignature)
	assert.ErrorContains(t, err, "unsigned")
	_, err = modelio.Load(bytes.NewReader(sign(otherPriv)), G.NewGraph(), modelio.Env{Graph: p.Graph, TrustedKeys: []ed25519.PublicKey{pub}})
	assert.ErrorIs(t, err, modelio.ErrSignature)
	bad := append([]byte(nil), signed...)
	bad[len(bad)-1] ^= 1
	_, err = modelio.Load(bytes.NewReader(bad), G.NewGraph(), trusted)
	assert.ErrorIs(t, err, modelio.ErrSignature)
	// An edit resealed with a new checksum breaks the signature too.
	hdr, params, _ := split(t, signed[:len(signed)-ed25519.SignatureSize])
	resealed := seal(bytes.Replace(hdr, []byte(`"hidden":6`), []byte(`"hidden":6 `), 1), params)
	resealed = append(resealed, signed[len(signed)-ed25519.SignatureSize:]...)
	_, err = modelio.Load(bytes.NewReader(resealed), G.NewGraph(), trusted)
	assert.ErrorIs(t, err, modelio.ErrSignature)
	cfg := modelio.DefaultSaveConfig()
	cfg.SigningKey, cfg.Untrained = priv[:10], true
	assert.ErrorContains(t, modelio.Save(io.Discard, m, cfg), "want an ed25519 private key")
}

// The file records the feature schema the model was trained on, and
// ReadHeader gives it back with the dtype, the graph and the kind.
func TestFeatureSchema(t *testing.T) {
	plain, p := savedGCN(t)
	m, err := modelio.Load(bytes.NewReader(plain), G.NewGraph(), modelio.Env{Graph: p.Graph})
	require.NoError(t, err)
	schema := &features.Schema{Names: []string{"a", "b", "c", "d"}, Scaling: &features.MinMax{Min: []float64{0, 1, 2, 3}, Max: []float64{1, 2, 3, 4}}}
	var buf bytes.Buffer
	cfg := modelio.SaveConfig{Features: schema, Untrained: true}
	require.NoError(t, modelio.Save(&buf, m, cfg))
	h, err := modelio.ReadHeader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, schema, h.Features)
	assert.Equal(t, "gcn", h.Kind)
	assert.Equal(t, tensor.Float32, h.Dtype)
	assert.Equal(t, p.N, h.Graph.Nodes)
	assert.False(t, h.Signed)
	require.Len(t, h.Params, 4)
	assert.Equal(t, layers.Param{Name: "gcn.0.W", Shape: []int{4, 6}}, h.Params[0])
	_, err = modelio.Load(bytes.NewReader(buf.Bytes()), G.NewGraph(), modelio.Env{Graph: p.Graph})
	assert.NoError(t, err)

	cfg.Features = &features.Schema{Names: []string{"a"}}
	assert.ErrorContains(t, modelio.Save(io.Discard, m, cfg), "the feature schema has 1 columns, the model takes 4")
	short := withHeader(t, buf.Bytes(), func(h map[string]any) {
		f := h["features"].(map[string]any)
		f["names"] = []string{"a", "b"}
		f["scaling"] = map[string]any{"min": []float64{0, 0}, "max": []float64{1, 1}}
	})
	_, err = modelio.Load(bytes.NewReader(short), G.NewGraph(), modelio.Env{Graph: p.Graph})
	assert.ErrorIs(t, err, modelio.ErrFormat)
	assert.ErrorContains(t, err, "the feature schema has 2 columns, the gcn configuration takes 4")
	miscased := withHeader(t, buf.Bytes(), func(h map[string]any) {
		f := h["features"].(map[string]any)
		f["Names"] = f["names"]
		delete(f, "names")
	})
	_, err = modelio.ReadHeader(bytes.NewReader(miscased))
	assert.ErrorIs(t, err, modelio.ErrFormat)

	// A categorical column's levels travel with the schema; a stray key in
	// them is refused.
	cat := &features.Schema{Names: []string{"a", "job=x", "job=y", "d"}, Categorical: []features.Categorical{{Column: "job", Levels: []string{"x", "y"}}}}
	buf.Reset()
	cfg.Features = cat
	require.NoError(t, modelio.Save(&buf, m, cfg))
	h, err = modelio.ReadHeader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, cat, h.Features)
	stray := withHeader(t, buf.Bytes(), func(h map[string]any) {
		h["features"].(map[string]any)["categorical"].([]any)[0].(map[string]any)["order"] = 1
	})
	_, err = modelio.ReadHeader(bytes.NewReader(stray))
	assert.ErrorIs(t, err, modelio.ErrFormat)
	unknownLevel := withHeader(t, buf.Bytes(), func(h map[string]any) {
		h["features"].(map[string]any)["categorical"].([]any)[0].(map[string]any)["levels"] = []string{"x", "z"}
	})
	_, err = modelio.ReadHeader(bytes.NewReader(unknownLevel))
	assert.ErrorIs(t, err, modelio.ErrFormat)
}

// FuzzLoad: no input makes Load panic, or allocate more than a small
// multiple of its size.
func FuzzLoad(f *testing.F) {
	data, p := savedGCN(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	hdr, params, _ := split(f, data)
	var h map[string]any
	require.NoError(f, json.Unmarshal(hdr, &h))
	h["params"].([]any)[0].(map[string]any)["shape"] = []int{1 << 20, 1 << 10}
	b, _ := json.Marshal(h)
	f.Add(seal(b, params))
	sum := sha256.Sum256([]byte("x"))
	f.Add(append([]byte("{}\n"), sum[:]...))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m layers.Model
		var err error
		n := allocated(func() { m, err = modelio.Load(bytes.NewReader(b), G.NewGraph(), modelio.Env{Graph: p.Graph}) })
		if err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
		if err != nil && n > uint64(64<<20)+uint64(8*len(b)) {
			t.Fatalf("a failed load of %d bytes allocated %d bytes", len(b), n)
		}
	})
}
