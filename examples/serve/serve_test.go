package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

type answer struct {
	Nodes []struct {
		ID          string  `json:"id"`
		Probability float64 `json:"probability"`
		Decision    int     `json:"decision"`
	} `json:"nodes"`
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(b, v), string(b))
}

// TestScoreRepeatConflict: a new request is answered (a probability and
// the decision it implies per node); repeating it, edges in another
// order, answers the same bytes again with Serve-Repeat and logs
// nothing; an accepted id with other content, or a request mixing
// accepted and new ids, is a 409; a base node's id is a 409.
func TestScoreRepeatConflict(t *testing.T) {
	f := getFixture(t)
	log := filepath.Join(t.TempDir(), "serve.log")
	s, srv, _ := f.open(t, log)
	defer stop(t, s, srv)
	c := srv.Client()
	rng := rand.New(rand.NewSource(1))
	a := f.newNode("a", 3, rng, "n1", "n2", "b")
	b := f.newNode("b", 10, rng, "n7")
	status, first, repeat, err := post(c, srv.URL, body(a, b))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, string(first))
	assert.False(t, repeat)
	var ans answer
	decode(t, first, &ans)
	require.Len(t, ans.Nodes, 2)
	for k, id := range []string{"a", "b"} {
		n := ans.Nodes[k]
		assert.Equal(t, id, n.ID)
		assert.True(t, n.Probability >= 0 && n.Probability <= 1, n.Probability)
		assert.Equal(t, n.Probability > 0.5, n.Decision == 1)
	}
	size := fileSize(t, log)

	a2 := f.newNode("a", 3, nil)
	decode(t, mustJSON(a), &a2)
	a2["edges"] = []string{"b", "n2", "n1"}
	status, again, repeat, err := post(c, srv.URL, body(a2, b))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, repeat)
	assert.Equal(t, string(first), string(again), "a repeat answers what was answered")
	assert.Equal(t, size, fileSize(t, log), "a repeat logs nothing")

	other := f.newNode("a", 4, rng, "n1")
	status, msg, _, err := post(c, srv.URL, body(other))
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, string(msg), `nodes[0].id: \"a\" was accepted before with other content`)

	status, msg, _, err = post(c, srv.URL, body(b, f.newNode("c", 5, rng)))
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, string(msg), `nodes[1].id: \"c\" is new, but other nodes of the request were accepted before`)

	status, msg, _, err = post(c, srv.URL, body(f.newNode("n12", 5, rng)))
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, string(msg), `nodes[0].id: \"n12\" is a node of the base graph`)
	assert.Equal(t, size, fileSize(t, log))

	var st stats
	resp, err := c.Get(srv.URL + "/stats")
	require.NoError(t, err)
	sb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	decode(t, sb, &st)
	assert.Equal(t, 2, st.AcceptedNodes)
	assert.Equal(t, 1, st.Requests)
	total := 0
	for _, g := range st.Groups {
		total += g.Nodes
	}
	assert.Equal(t, 2, total)
	require.NotNil(t, st.Drift, string(sb))
	assert.Equal(t, 2, st.Drift.Nodes)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

// TestBallIsTheWholeGraph: the scores the service gives new nodes,
// computed on the ball of radius hops + 1 around them, are the scorer's
// on the whole grown graph.
func TestBallIsTheWholeGraph(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"))
	defer stop(t, s, srv)
	rng := rand.New(rand.NewSource(2))
	var got []float64
	var ids []string
	for k := 0; k < 5; k++ {
		a := f.newNode("p"+string(rune('a'+k)), rng.Intn(300), rng, "n"+itoa(rng.Intn(300)))
		if k > 0 {
			a["edges"] = append(a["edges"].([]string), ids[k-1])
		}
		status, b, _, err := post(srv.Client(), srv.URL, body(a))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, string(b))
		var ans answer
		decode(t, b, &ans)
		got = append(got, ans.Nodes[0].Probability)
		ids = append(ids, a["id"].(string))
	}
	// Rescore the last node on the whole graph as it is now: it was the
	// last added, so its ball has not changed since.
	st := s.st
	out := scoreLastWhole(t, s)
	assert.InDelta(t, out.Probs[1], got[len(got)-1], 1e-12)
	ball, _, _, _, err := st.ball([]int{st.n() - 1}, s.hops)
	require.NoError(t, err)
	assert.Less(t, ball.N(), st.n(), "the test means something only if the ball is not the whole graph")
}

func itoa(i int) string { return string(mustJSON(i)) }

// TestRowIDs: without -id a base node is known by its 0-based row, as a
// decimal string.
func TestRowIDs(t *testing.T) {
	f := getFixture(t)
	dir := t.TempDir()
	// The edge list by rows: the fixture's ids are "n" and the row.
	raw, err := os.ReadFile(f.edges)
	require.NoError(t, err)
	rows := *f
	rows.edges = filepath.Join(dir, "edges.csv")
	require.NoError(t, os.WriteFile(rows.edges, []byte(strings.ReplaceAll(string(raw), "n", "")), 0o644))
	args := rows.args(filepath.Join(dir, "serve.log"), "-drop", "node")
	for i := range args {
		if args[i] == "-id" {
			args = append(args[:i], args[i+2:]...)
			break
		}
	}
	o, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	s, err := openService(context.Background(), o, io.Discard)
	require.NoError(t, err)
	srv := serveTest(s)
	defer stop(t, s, srv)
	status, b, _, err := post(srv.Client(), srv.URL, body(f.newNode("a", 1, nil, "0", "999")))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, string(b))
	status, b, _, err = post(srv.Client(), srv.URL, body(f.newNode("b", 1, nil, "n1")))
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(b), `nodes[0].edges[0]: unknown node id \"n1\"`)
	status, b, _, err = post(srv.Client(), srv.URL, body(f.newNode("17", 1, nil)))
	require.NoError(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, string(b), `is a node of the base graph`)
}

// TestShuffledRows: the base graph's nodes are known by their ids, never
// by their row in the node table: the table with its rows shuffled gives
// the same answers, bit for bit, and replays the log written with the
// table in its first order (with either meaning of FMP).
func TestShuffledRows(t *testing.T) {
	f := getFixture(t)
	for _, mode := range []string{"fitted", "frozen"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			raw, err := os.ReadFile(f.nodes)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
			rows := lines[1:]
			rand.New(rand.NewSource(11)).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
			shuffled := *f
			shuffled.nodes = filepath.Join(dir, "shuffled.csv")
			require.NoError(t, os.WriteFile(shuffled.nodes, []byte(lines[0]+"\n"+strings.Join(rows, "\n")+"\n"), 0o644))

			reqs := chain(f, 4, 12, "s")
			log := filepath.Join(dir, "serve.log")
			answers, _, _ := acceptAll(t, f, log, reqs, "-fmp", mode)
			again, _, _ := acceptAll(t, &shuffled, filepath.Join(dir, "shuffled.log"), reqs, "-fmp", mode)
			assert.Equal(t, answers, again, "the same answers, bit for bit, from the shuffled table")
			replayed, _, msg := acceptAll(t, &shuffled, log, reqs, "-fmp", mode)
			assert.Empty(t, msg)
			assert.Equal(t, answers, replayed, "the first table's log replays onto the shuffled one, every request a repeat")
		})
	}
}

// TestStatsDriftMixAndFeatures (issue 53, A4): /stats' drift compares the
// accepted (unlabelled) nodes' group mix and features with the model
// file's references, naming groups by their values and features by
// their names: 60 nodes all of one group, with a feature at 1.5 times
// its training range (inside -feature-range-factor 3, so accepted), warn
// of both. Before, /stats compared decisions only.
func TestStatsDriftMixAndFeatures(t *testing.T) {
	f := getFixture(t)
	s, srv, _ := f.open(t, filepath.Join(t.TempDir(), "serve.log"))
	defer stop(t, s, srv)
	c := srv.Client()
	rng := rand.New(rand.NewSource(4))
	// Base nodes of group 1 only, to copy.
	var src []int
	for i, g := range f.ds.Sens {
		if g == 1 {
			src = append(src, i)
		}
	}
	require.NotEmpty(t, src)
	name := f.featureNames[0]
	sc := f.ds.Scaling
	require.NotNil(t, sc)
	beyond := sc.Max[0] + 0.5*(sc.Max[0]-sc.Min[0])
	for k := 0; k < 60; k++ {
		n := f.newNode(fmt.Sprintf("m%d", k), src[rng.Intn(len(src))], rng, fmt.Sprintf("n%d", rng.Intn(100)))
		n["features"].(map[string]any)[name] = beyond
		status, msg, _, err := post(c, srv.URL, body(n))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, string(msg))
	}
	resp, err := c.Get(srv.URL + "/stats")
	require.NoError(t, err)
	sb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st stats
	decode(t, sb, &st)
	require.NotNil(t, st.Drift, string(sb))
	assert.NotEmpty(t, st.Drift.GroupMix)
	require.NotNil(t, st.Drift.Features, "features compared")
	all := strings.Join(st.Drift.Warnings, "\n")
	assert.Contains(t, all, fmt.Sprintf("group %q", f.ds.GroupNames[1]))
	assert.Contains(t, all, "share")
	assert.Contains(t, all, fmt.Sprintf("feature %q", name))
	assert.Contains(t, st.DriftNote, "group_mix")
}

// scoreLastWhole scores the service's last accepted node with its scorer
// on the whole graph as it is now (base nodes, accepted nodes and their
// edges): the reference an answer is checked against.
func scoreLastWhole(t *testing.T, s *service) *score.Scores {
	t.Helper()
	st := s.st
	var edges [][2]int
	for u := 0; u < st.n(); u++ {
		st.neighbors(u, func(v int) {
			if v > u {
				edges = append(edges, [2]int{u, v})
			}
		})
	}
	g, err := graph.FromEdges(st.n(), edges)
	require.NoError(t, err)
	x, err := features.NewDense(st.x, st.n(), st.d)
	require.NoError(t, err)
	out, err := s.sc.Score(context.Background(), g, x, st.sens, []int{st.n() - 1})
	require.NoError(t, err)
	return out
}
