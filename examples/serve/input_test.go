package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

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
	require.Nil(t, c.row("nodes[0].features", vals, row))
	d := len(f.featureNames)
	assert.Equal(t, []float64{0, 1}, row[d:], "blue, red: red is 1")
	vals["colour"] = value{Level: "green", Text: true}
	err := c.row("nodes[0].features", vals, row)
	require.NotNil(t, err)
	assert.Equal(t, `nodes[0].features.colour: unknown level "green"; the levels are "blue", "red"`, err.Msg)
	vals["colour"] = value{Num: 1}
	err = c.row("nodes[0].features", vals, row)
	require.NotNil(t, err)
	assert.Contains(t, err.Msg, "nodes[0].features.colour: a categorical column: want one of its levels as a string")
	vals["colour"] = value{Level: "red", Text: true}
	vals[f.featureNames[0]] = value{Num: 1e300}
	err = c.row("nodes[0].features", vals, row)
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
