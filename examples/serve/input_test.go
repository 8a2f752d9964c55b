package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/graph/features"
)

// TestBadInput: every malformed or invalid request is a 4xx whose JSON
// error names the field at fault, and nothing of it is logged or kept.
func TestBadInput(t *testing.T) {
	f := getFixture(t)
	log := filepath.Join(t.TempDir(), "serve.log")
	s, srv, _ := f.open(t, log, "-max-body", "4096", "-max-nodes", "3")
	defer stop(t, s, srv)
	size := fileSize(t, log)
	rng := rand.New(rand.NewSource(3))
	node := func(id string, edit func(n map[string]any)) map[string]any {
		n := f.newNode(id, rng.Intn(1000), rng, "n1")
		if edit != nil {
			edit(n)
		}
		return n
	}
	feats := func(n map[string]any) map[string]any { return n["features"].(map[string]any) }
	x0 := f.featureNames[0]
	cases := []struct {
		name   string
		body   string
		status int
		field  string
		msg    string
	}{
		{"malformed JSON", `{"nodes": [{"id": "a",`, 400, "body", "the JSON ends early"},
		{"not JSON", `nodes=a`, 400, "body", "malformed JSON at byte"},
		{"trailing data", string(body(node("a", nil))) + `{}`, 400, "body", "data after the request object"},
		{"not an object", `[1, 2]`, 400, "body", "want a JSON object"},
		{"unknown top-level field", `{"nodes": [], "model": "x"}`, 400, "model", "unknown field"},
		{"no nodes", `{}`, 400, "nodes", "missing"},
		{"empty nodes", `{"nodes": []}`, 400, "nodes", "empty"},
		{"unknown column", string(body(node("a", nil), node("b", func(n map[string]any) { feats(n)["age"] = 3 }))), 400, "nodes[1].features.age", "unknown column; the model's columns are " + strings.Join(f.featureNames, ", ")},
		{"missing column", string(body(node("a", func(n map[string]any) { delete(feats(n), x0) }))), 400, "nodes[0].features", "missing column(s) " + x0},
		{"text for a number", string(body(node("a", func(n map[string]any) { feats(n)[x0] = "1.5" }))), 400, "nodes[0].features." + x0, `want a number, got the string "1.5"`},
		{"null feature", strings.Replace(string(body(node("a", nil))), `"`+x0+`":`, `"`+x0+`":null,"x":`, 1), 400, "nodes[0].features." + x0, "want a number"},
		{"non-finite value", strings.Replace(string(body(node("a", nil))), `"`+x0+`":`, `"`+x0+`":1e999,"x":`, 1), 400, "nodes[0].features." + x0, "1e999 is not a finite number"},
		{"column twice", strings.Replace(string(body(node("a", nil))), `"`+x0+`":`, `"`+x0+`":1,"`+x0+`":`, 1), 400, "nodes[0].features." + x0, "given twice"},
		{"unknown group", string(body(node("a", func(n map[string]any) { n["group"] = "martian" }))), 400, "nodes[0].group", `unknown group "martian"; the groups are`},
		{"missing group", string(body(node("a", func(n map[string]any) { delete(n, "group") }))), 400, "nodes[0].group", "missing"},
		{"group not a string", string(body(node("a", func(n map[string]any) { n["group"] = 1 }))), 400, "nodes[0].group", "want a string, got the number 1"},
		{"missing id", string(body(node("a", func(n map[string]any) { delete(n, "id") }))), 400, "nodes[0].id", "missing"},
		{"empty id", string(body(node("", nil))), 400, "nodes[0].id", "empty"},
		{"unknown node field", string(body(node("a", func(n map[string]any) { n["label"] = 1 }))), 400, "nodes[0].label", "unknown field; a node has id, features, group and edges"},
		{"edge to an unknown id", string(body(node("a", nil), node("b", func(n map[string]any) { n["edges"] = []string{"a", "zz"} }))), 400, "nodes[1].edges[1]", `unknown node id "zz": neither a node of the graph nor of this request`},
		{"edge to itself", string(body(node("a", func(n map[string]any) { n["edges"] = []string{"a"} }))), 400, "nodes[0].edges[0]", "the node's own id"},
		{"edge twice", string(body(node("a", func(n map[string]any) { n["edges"] = []string{"n1", "n2", "n1"} }))), 400, "nodes[0].edges[2]", `"n1" repeats edges[0]`},
		{"edge not a string", string(body(node("a", func(n map[string]any) { n["edges"] = []int{1} }))), 400, "nodes[0].edges[0]", "want a string"},
		{"duplicate ids", string(body(node("a", nil), node("a", nil))), 400, "nodes[1].id", `"a" repeats nodes[0].id`},
		{"too many nodes", string(body(node("a", nil), node("b", nil), node("c", nil), node("d", nil))), 413, "nodes", "more than -max-nodes 3 nodes"},
		{"body too large", `{"nodes": [` + strings.Repeat(" ", 5000) + `]}`, 413, "body", "larger than -max-body 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, b, _, err := post(srv.Client(), srv.URL, []byte(c.body))
			require.NoError(t, err)
			assert.Equal(t, c.status, status, string(b))
			var e apiError
			decode(t, b, &e)
			assert.Equal(t, c.field, e.Field, e.Msg)
			assert.True(t, strings.HasPrefix(e.Msg, c.field+": "), "the message starts with the field: %s", e.Msg)
			assert.Contains(t, e.Msg, c.msg)
		})
	}
	// Another method, another path.
	resp, err := srv.Client().Get(srv.URL + "/score")
	require.NoError(t, err)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp.Body.Close()
	resp, err = srv.Client().Post(srv.URL+"/nodes", "application/json", bytes.NewReader(body(node("a", nil))))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, string(b), "the endpoints are POST /score and GET /stats")

	assert.Equal(t, size, fileSize(t, log), "nothing was logged")
	assert.Equal(t, 0, s.st.accepted(), "nothing was kept")
	assert.Equal(t, 1000, s.st.n())
	// And the service still takes a good request.
	status, b, _, err := post(srv.Client(), srv.URL, body(node("a", nil)))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, string(b))
}

// TestCategorical: a categorical column is one request column whose
// value is a level, encoded one-hot with the model's levels; another
// level or a number is refused naming the column.
func TestCategorical(t *testing.T) {
	f := getFixture(t)
	c := newColumns(schemaWithCategory(f), 1e19)
	assert.Equal(t, append(append([]string{}, f.featureNames...), "colour"), c.names)
	row := make([]float64, len(f.featureNames)+2)
	vals := map[string]value{"colour": {Level: "red", Text: true}}
	for _, n := range f.featureNames {
		vals[n] = value{Num: 0}
	}
	require.Nil(t, c.row("nodes[0].features", "a", vals, row))
	d := len(f.featureNames)
	assert.Equal(t, []float64{0, 1}, row[d:], "blue, red: red is 1")
	vals["colour"] = value{Level: "green", Text: true}
	err := c.row("nodes[0].features", "a", vals, row)
	require.NotNil(t, err)
	assert.Equal(t, `nodes[0].features.colour: unknown level "green"; the levels are "blue", "red"`, err.Msg)
	vals["colour"] = value{Num: 1}
	err = c.row("nodes[0].features", "a", vals, row)
	require.NotNil(t, err)
	assert.Contains(t, err.Msg, "nodes[0].features.colour: a categorical column: want one of its levels as a string")
	vals["colour"] = value{Level: "red", Text: true}
	vals[f.featureNames[0]] = value{Num: 1e300}
	err = c.row("nodes[0].features", "a", vals, row)
	require.NotNil(t, err)
	assert.Contains(t, err.Msg, fmt.Sprintf("nodes[0].features.%s: 1e+300 scales to", f.featureNames[0]))
}

// schemaWithCategory is the fixture's schema with a categorical column
// colour of levels blue and red after its numeric columns.
func schemaWithCategory(f *fixture) features.Schema {
	s := f.ds.Schema()
	s.Names = append(append([]string{}, s.Names...), "colour=blue", "colour=red")
	s.Scaling = &features.MinMax{Min: append(append([]float64{}, s.Scaling.Min...), -1, -1), Max: append(append([]float64{}, s.Scaling.Max...), 1, 1)}
	s.Categorical = []features.Categorical{{Column: "colour", Levels: []string{"blue", "red"}}}
	return s
}

// TestInvalidUTF8Refused is the regression test of ids that collided:
// the JSON decoder made invalid UTF-8 (and an escaped lone surrogate)
// U+FFFD, so that two different raw ids were one node. Now a body that
// is not UTF-8 is refused with the byte offset, and an id or edge that
// decodes to U+FFFD is refused naming the field.
func TestInvalidUTF8Refused(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"))
	defer stop(t, s, srv)
	raw := strings.Replace(string(body(f.newNode("aIDb", 1, nil, "n1"))), "ID", "\xff", 1) // Marshal would make it U+FFFD
	at := strings.Index(raw, "a\xffb") + 1
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"raw invalid byte", raw, "body", fmt.Sprintf("body: invalid UTF-8 at byte %d", at)},
		{"lone surrogate", strings.Replace(string(body(f.newNode("ID", 1, nil, "n1"))), "ID", `\ud800`, 1), "nodes[0].id", "holds U+FFFD"},
		{"other lone surrogate", strings.Replace(string(body(f.newNode("ID", 1, nil, "n1"))), "ID", `\udc00`, 1), "nodes[0].id", "holds U+FFFD"},
		{"edge", strings.Replace(string(body(f.newNode("a", 1, nil, "EDGE"))), "EDGE", `\ud800`, 1), "nodes[0].edges[0]", "holds U+FFFD"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, b, _, err := post(srv.Client(), srv.URL, []byte(c.body))
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, status, string(b))
			var e apiError
			decode(t, b, &e)
			assert.Equal(t, c.field, e.Field)
			assert.Contains(t, e.Msg, c.msg)
		})
	}
	assert.Equal(t, 0, s.st.accepted())
}

// TestEchoesBounded is the regression test of a 1 MB bad key echoed
// twice in a 2 MB answer: every piece of the request an error repeats
// is cut to 64 bytes and "…".
func TestEchoesBounded(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"), "-max-body", "4000000")
	defer stop(t, s, srv)
	big := strings.Repeat("é", 500_000) // 1 MB, two bytes a character
	good := string(body(f.newNode("a", 1, nil, "n1")))
	x0 := f.featureNames[0]
	for _, c := range []struct{ name, body string }{
		{"feature key", strings.Replace(good, `"`+x0+`":`, `"`+big+`":1,"`+x0+`":`, 1)},
		{"node key", strings.Replace(good, `"id":`, `"`+big+`":1,"id":`, 1)},
		{"top-level key", `{"` + big + `": 1}`},
		{"number", strings.Replace(good, `"`+x0+`":`, `"`+x0+`":1`+strings.Repeat("0", 1_000_000)+`,"x":`, 1)},
		{"group", strings.Replace(good, `"group":"`, `"group":"`+big, 1)},
		{"edge", strings.Replace(good, `"n1"`, `"`+big+`"`, 1)},
		{"id", strings.Replace(good, `"id":"a"`, `"id":"`+strings.Repeat("a", 200)+`"},{"id":"`+strings.Repeat("a", 200)+`"`, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, b, _, err := post(srv.Client(), srv.URL, []byte(c.body))
			require.NoError(t, err)
			assert.Equal(t, http.StatusBadRequest, status, "%.300s", b)
			assert.Less(t, len(b), 1024, "%.300s", b)
			var e apiError
			decode(t, b, &e)
			assert.True(t, utf8.ValidString(e.Msg), e.Msg)
		})
	}
}

// TestMaxEdges is the regression test of one request of 1,000 nodes ×
// 120 edges holding the single writer for seconds: the edges a request
// lists (its nodes' together) are capped by -max-edges, refused with a
// 413 naming the flag and what to do, before the writer sees them.
func TestMaxEdges(t *testing.T) {
	f := getFixture(t)
	log := filepath.Join(t.TempDir(), "serve.log")
	s, srv, _ := f.open(t, log, "-max-edges", "8")
	defer stop(t, s, srv)
	size := fileSize(t, log)
	rng := rand.New(rand.NewSource(4))
	over := body(f.newNode("a", 1, rng, "n1", "n2", "n3"), f.newNode("b", 2, rng, "n4", "n5", "a"), f.newNode("c", 3, rng, "n6", "n7", "n8"))
	status, b, _, err := post(srv.Client(), srv.URL, over)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status, string(b))
	var e apiError
	decode(t, b, &e)
	assert.Equal(t, "nodes[2].edges[2]", e.Field)
	assert.Contains(t, e.Msg, "more than -max-edges 8 edges in one request")
	assert.Contains(t, e.Msg, "split the request")
	assert.Equal(t, size, fileSize(t, log), "nothing was logged")
	status, b, _, err = post(srv.Client(), srv.URL, body(f.newNode("a", 1, rng, "n1", "n2", "n3"), f.newNode("b", 2, rng, "n4", "n5", "a"), f.newNode("c", 3, rng, "n6", "n7")))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, "8 edges are taken: %s", b)

	var help bytes.Buffer
	_, err = parseFlags([]string{"-h"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Contains(t, help.String(), fmt.Sprintf("-max-edges int\n    \tmost edges in one request"))
	assert.Contains(t, help.String(), fmt.Sprintf("(default %d)", defaultMaxEdges))
}

// TestFeatureRange is the regression test of x0 = 1e18 (training range
// a few units wide) accepted, logged and replayed, changing the answers
// of the nodes attached near it: a value outside -feature-range-factor
// (3 by default) times its column's training range is refused naming
// the node, the feature, the value and the range, and counted in
// /stats; with 0 it is taken, and a log holding it is replayed as
// answered, with a warning, under the default. A model file without a
// training range needs -feature-range-factor 0.
func TestFeatureRange(t *testing.T) {
	f := getFixture(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "serve.log")
	x0 := f.featureNames[0]
	lo, hi := f.ds.Scaling.Min[0], f.ds.Scaling.Max[0]
	mid, half := lo/2+hi/2, (hi/2-lo/2)*3
	with := func(id string, v float64) []byte {
		n := f.newNode(id, 1, nil, "n1")
		n["features"].(map[string]any)[x0] = v
		return body(n)
	}

	s, srv, _ := f.open(t, log)
	size := fileSize(t, log)
	for _, v := range []float64{1e18, mid + half*1.01, mid - half*1.01} {
		status, b, _, err := post(srv.Client(), srv.URL, with("far", v))
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, status, string(b))
		var e apiError
		decode(t, b, &e)
		assert.Equal(t, "nodes[0].features."+x0, e.Field)
		assert.Contains(t, e.Msg, fmt.Sprintf(`node "far": %s = %v is outside the range this service takes for %s, %.4g to %.4g (-feature-range-factor 3 times the training range %.4g to %.4g`, x0, v, x0, mid-half, mid+half, lo, hi))
		assert.Contains(t, e.Msg, "restart serve with a larger -feature-range-factor (0: no check)")
	}
	assert.Equal(t, size, fileSize(t, log), "nothing was logged")
	status, b, _, err := post(srv.Client(), srv.URL, with("near", mid+half*0.99))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, "a value inside the range is taken: %s", b)
	var st stats
	resp, err := srv.Client().Get(srv.URL + "/stats")
	require.NoError(t, err)
	sb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	decode(t, sb, &st)
	assert.Equal(t, featureDrift{Factor: 3, Refused: 3, ByFeature: map[string]int{x0: 3}}, st.FeatureDrift)
	stop(t, s, srv)

	// Taken with 0, then replayed under the default with a warning.
	s, srv, _ = f.open(t, log, "-feature-range-factor", "0")
	status, b, _, err = post(srv.Client(), srv.URL, with("far", 1e18))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, string(b))
	stop(t, s, srv)
	s, srv, msg := f.open(t, log)
	assert.Contains(t, msg, "holds 1 feature values outside -feature-range-factor 3 times their training range")
	assert.Equal(t, 2, s.st.accepted())
	assert.Equal(t, 1, s.replayedOutside)
	stop(t, s, srv)

	// No training range in the model file.
	bare := *f
	bare.model, bare.keyFile = f.noScaling, ""
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a service that starts stops at once
	code := run(ctx, bare.args(filepath.Join(dir, "bare.log"), "-addr", "127.0.0.1:0"), &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "records no training range of its features")
	assert.Contains(t, stderr.String(), "Start with -feature-range-factor 0")
	o, err := parseFlags(bare.args(filepath.Join(dir, "bare.log"), "-feature-range-factor", "0"), io.Discard)
	require.NoError(t, err)
	s, err = openService(context.Background(), o, io.Discard)
	require.NoError(t, err)
	require.NoError(t, s.close())

	for _, bad := range []string{"0.5", "-1", "NaN", "+Inf"} {
		_, err := parseFlags(f.args(log, "-feature-range-factor", bad), io.Discard)
		assert.ErrorContains(t, err, "-feature-range-factor")
	}
}
