package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/internal/blas"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/fairmp/fairmp/metrics"
)

// TestMain runs the command itself when the test binary is re-executed
// with SERVE_TEST_MAIN=1 (the kill-and-restart and load tests' server
// processes), and the tests otherwise.
func TestMain(m *testing.M) {
	blas.Default()
	if os.Getenv("SERVE_TEST_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	code := m.Run()
	if fix != nil {
		os.RemoveAll(fix.dir)
	}
	os.Exit(code)
}

// fixture is a small graph written as files (the format debias reads and
// -export writes) and an FMP model trained on it, saved with its feature
// schema, fitted duals and a drift baseline, once per test binary.
type fixture struct {
	dir          string
	nodes, edges string
	model        string // signed by key
	unsigned     string // the same model, unsigned and without a baseline
	noSchema     string // the same model without a feature schema
	noScaling    string // the same model, its schema without the scaling (no training range)
	keyFile      string // the signing key's public half
	otherKey     string // a key that signed nothing
	ds           *datasets.Dataset
	featureNames []string
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func getFixture(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = buildFixture() })
	require.NoError(t, fixErr)
	return fix
}

func buildFixture() (*fixture, error) {
	dir, err := os.MkdirTemp("", "serve-fixture-")
	if err != nil {
		return nil, err
	}
	f := &fixture{dir: dir, nodes: filepath.Join(dir, "nodes.csv"), edges: filepath.Join(dir, "edges.csv")}
	c := datasets.DefaultSyntheticConfig()
	c.N, c.MeanDegree, c.NumFeatures, c.Seed = 1000, 3, 6, 1
	syn, err := datasets.Synthetic(c)
	if err != nil {
		return nil, err
	}
	fc, err := datasets.WriteFiles(syn, f.nodes, f.edges)
	if err != nil {
		return nil, err
	}
	fc.MinMaxScale = true // a schema with a scaling, as debias saves by default
	ds, err := datasets.LoadFiles(fc)
	if err != nil {
		return nil, err
	}
	f.ds, f.featureNames = ds, ds.FeatureNames
	g := G.NewGraph()
	x, err := train.FeatureNode(g, tensor.Float64, ds.Features, ds.N(), ds.NumFeatures, "x")
	if err != nil {
		return nil, err
	}
	task := &train.Task{Graph: g, X: x, Labels: ds.Labels, Train: ds.Split.Train, Val: ds.Split.Val, Classes: 2, Phase: layers.NewPhase()}
	gc := layers.DefaultGCNConfig(ds.NumFeatures, 2)
	gc.Hidden = 16
	gcn, err := layers.NewGCN(g, ds.Graph, gc, task.Phase)
	if err != nil {
		return nil, err
	}
	tc := train.DefaultConfig()
	tc.Epochs, tc.Adam.LR = 40, 0.01
	if _, err := train.Fit(context.Background(), gcn, task, tc); err != nil {
		return nil, err
	}
	on := fmp.DefaultOnConfig()
	on.FMP.K = 2
	m, err := fmp.On(gcn, ds.Graph, ds.Sens, on, task.Phase)
	if err != nil {
		return nil, err
	}
	xs, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
	if err != nil {
		return nil, err
	}
	if err := m.Record(xs); err != nil {
		return nil, err
	}
	pred, err := train.Predict(m, task, nil)
	if err != nil {
		return nil, err
	}
	bc := metrics.DefaultBootstrapConfig()
	bc.Resamples = 200
	base, err := metrics.NewBaseline(pred.Probs, 2, ds.Labels, ds.Sens, ds.Split.Val, metrics.DefaultOptions(), bc)
	if err != nil {
		return nil, err
	}
	// As debias records it: the groups by name, and every feature's
	// reference on the training graph.
	base.GroupNames = ds.GroupNames
	if err := base.RecordFeatures(ds.Features, ds.NumFeatures, ds.FeatureNames, nil); err != nil {
		return nil, err
	}
	schema := ds.Schema()
	noScale := schema
	noScale.Scaling = nil
	pub, priv, err := ed25519.GenerateKey(rand.New(rand.NewSource(1)))
	if err != nil {
		return nil, err
	}
	other, _, err := ed25519.GenerateKey(rand.New(rand.NewSource(2)))
	if err != nil {
		return nil, err
	}
	f.keyFile, f.otherKey = filepath.Join(dir, "key.pub"), filepath.Join(dir, "other.pub")
	for path, k := range map[string]ed25519.PublicKey{f.keyFile: pub, f.otherKey: other} {
		if err := os.WriteFile(path, []byte(hex.EncodeToString(k)+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	for _, s := range []struct {
		path *string
		name string
		cfg  modelio.SaveConfig
	}{
		{&f.model, "model.fmp", modelio.SaveConfig{Features: &schema, Baseline: &base, SigningKey: priv}},
		{&f.unsigned, "unsigned.fmp", modelio.SaveConfig{Features: &schema}},
		{&f.noSchema, "noschema.fmp", modelio.SaveConfig{}},
		{&f.noScaling, "noscaling.fmp", modelio.SaveConfig{Features: &noScale}},
	} {
		var buf bytes.Buffer
		if err := modelio.Save(&buf, m, s.cfg); err != nil {
			return nil, err
		}
		*s.path = filepath.Join(dir, s.name)
		if err := os.WriteFile(*s.path, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// args are the command's flags for the fixture, with the log at log.
func (f *fixture) args(log string, extra ...string) []string {
	args := []string{"-model", f.model, "-nodes", f.nodes, "-edges", f.edges,
		"-id", "node", "-label", "label", "-sens", "group", "-split-column", "split", "-log", log, "-q"}
	if f.keyFile != "" {
		args = append(args, "-trusted-keys", f.keyFile)
	}
	return append(args, extra...)
}

// open starts the service in this process on the fixture, with its HTTP
// handler on a test server.
func (f *fixture) open(t *testing.T, log string, extra ...string) (*service, *httptest.Server, string) {
	t.Helper()
	var stderr bytes.Buffer
	o, err := parseFlags(f.args(log, extra...), &stderr)
	require.NoError(t, err)
	s, err := openService(context.Background(), o, &stderr)
	require.NoError(t, err, stderr.String())
	return s, serveTest(s), stderr.String()
}

// serveTest serves s on a test server configured as the command's (its
// timeouts, and the per-client cap on its listener).
func serveTest(s *service) *httptest.Server {
	srv := httptest.NewUnstartedServer(nil)
	s.configure(srv.Config)
	srv.Listener = newClientLimit(srv.Listener, s.o.maxConns)
	srv.Start()
	return srv
}

// stop closes the test server and the service.
func stop(t *testing.T, s *service, srv *httptest.Server) {
	t.Helper()
	srv.Close()
	require.NoError(t, s.close())
}

// newNode is a request node: a copy of base node src's raw features
// (shifted by a little noise), its group, edges to the ids given.
func (f *fixture) newNode(id string, src int, rng *rand.Rand, edges ...string) map[string]any {
	feats := map[string]any{}
	for j, name := range f.featureNames {
		v := f.ds.Features[src*f.ds.NumFeatures+j]
		// The table holds raw values; the dataset the scaled ones:
		// unscale with the schema's range.
		raw, width := v, 2.0
		if sc := f.ds.Scaling; sc != nil {
			lo, hi := sc.Min[j], sc.Max[j]
			raw, width = lo+(v+1)/2*(hi-lo), hi-lo
		}
		if rng != nil {
			raw += 0.05 * width * rng.NormFloat64()
		}
		feats[name] = raw
	}
	return map[string]any{"id": id, "features": feats, "group": f.ds.GroupNames[f.ds.Sens[src]], "edges": append([]string{}, edges...)}
}

// body encodes a request of nodes.
func body(nodes ...map[string]any) []byte {
	b, err := json.Marshal(map[string]any{"nodes": nodes})
	if err != nil {
		panic(err)
	}
	return b
}

// post sends a body to url/score and returns the status, the body and
// whether the answer says it repeats an earlier one.
func post(c *http.Client, url string, b []byte) (int, []byte, bool, error) {
	resp, err := c.Post(url+"/score", "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, nil, false, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header.Get("Serve-Repeat") == "true", err
}

// proc is the command running in a child process (the test binary
// re-executed).
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
}

// startProc starts the command with args and waits for it to listen.
func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, append(args, "-addr", "127.0.0.1:0")...)
	cmd.Env = append(os.Environ(), "SERVE_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = &syncWriter{w: p.stderr}
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-lines:
		require.True(t, strings.HasPrefix(l, "listening on "), l)
		p.url = strings.TrimPrefix(l, "listening on ")
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the server did not start in 30 s: %s", p.stderr)
	}
	return p
}

// kill kills the process with SIGKILL and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// term stops the process with SIGTERM and returns its exit error.
func (p *proc) term() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.cmd.Wait()
}

// syncWriter serialises writes to w (the child's stderr is copied by a
// goroutine of exec while the test reads it).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (p *proc) errText() string {
	sw := p.cmd.Stderr.(*syncWriter)
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return p.stderr.String()
}

// baseIDs returns k distinct ids of base nodes, drawn with rng.
func (f *fixture) baseIDs(rng *rand.Rand, k int) []string {
	out := make([]string, 0, k)
	for len(out) < k {
		id := f.ds.IDs[rng.Intn(f.ds.N())]
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// loadFixture is the fixture, or with SERVE_LOAD_DIR set, the files of
// the README's commands in that folder: syn/nodes.csv and syn/edges.csv
// (debias -export) and out/model.fmp (debias -out), for TestLoad to
// measure a model of your own.
func loadFixture(t *testing.T) *fixture {
	t.Helper()
	dir := os.Getenv("SERVE_LOAD_DIR")
	if dir == "" {
		return getFixture(t)
	}
	f := &fixture{dir: dir, nodes: filepath.Join(dir, "syn", "nodes.csv"), edges: filepath.Join(dir, "syn", "edges.csv"), model: filepath.Join(dir, "out", "model.fmp")}
	fh, err := os.Open(f.model)
	require.NoError(t, err)
	defer fh.Close()
	h, err := modelio.ReadHeader(fh)
	require.NoError(t, err)
	c := datasets.DefaultFilesConfig()
	c.Nodes, c.Edges, c.IDColumn, c.LabelColumn, c.SensColumn, c.SplitColumn, c.Schema = f.nodes, f.edges, "node", "label", "group", "split", h.Features
	f.ds, err = datasets.LoadFiles(c)
	require.NoError(t, err)
	f.featureNames = f.ds.FeatureNames
	return f
}
