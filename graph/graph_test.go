package graph

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFromEdges(t *testing.T) {
	edges := [][2]int{{0, 1}, {1, 0}, {2, 1}, {1, 2}, {0, 0}, {3, 3}, {0, 1}}
	g, err := FromEdges(5, edges)
	require.NoError(t, err)
	if g.N() != 5 || g.NumEdges() != 2 || g.Isolated() != 2 {
		t.Errorf("N %d, edges %d, isolated %d; want 5, 2, 2", g.N(), g.NumEdges(), g.Isolated())
	}
	if c := g.Cleanup(); c != (Cleanup{Input: 7, SelfLoops: 2, Duplicates: 3}) {
		t.Errorf("cleanup %+v, want 7 input, 2 self-loops, 3 duplicates", c)
	}
	if d := g.Degrees(); !reflect.DeepEqual(d, []int{1, 2, 1, 0, 0}) {
		t.Errorf("degrees %v", d)
	}
	for i, want := range [][]int32{{1}, {0, 2}, {1}, {}, {}} {
		if got := g.Neighbors(i); len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("neighbours of %d: %v, want %v", i, got, want)
		}
		if g.Degree(i) != len(want) {
			t.Errorf("degree of %d: %d", i, g.Degree(i))
		}
	}
	if e := g.Edges(); !reflect.DeepEqual(e, [][2]int{{0, 1}, {1, 2}}) {
		t.Errorf("edges %v", e)
	}
	// No edges at all is a valid graph.
	g, err = FromEdges(3, nil)
	if err != nil || g.NumEdges() != 0 || g.Isolated() != 3 {
		t.Errorf("empty graph: %v, %v", g, err)
	}
}

func TestFromEdgesErrors(t *testing.T) {
	for _, c := range []struct {
		n     int
		edges [][2]int
		want  string
	}{
		{0, nil, "n = 0, want n > 0"},
		{-3, nil, "n = -3, want n > 0"},
		{4, [][2]int{{0, 1}, {2, 3}, {1, 4}}, "edge 2 is (1, 4), want both ends in [0, 4)"},
		{4, [][2]int{{-1, 1}}, "edge 0 is (-1, 1)"},
	} {
		_, err := FromEdges(c.n, c.edges)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FromEdges(%d, %v): error %v, want %q", c.n, c.edges, err, c.want)
		}
	}
}

// TestFromEdgesRandom compares FromEdges with a set-based construction.
func TestFromEdgesRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n := 50
	edges := make([][2]int, 400)
	set := map[[2]int]bool{}
	loops := 0
	for k := range edges {
		u, v := rng.Intn(n), rng.Intn(n)
		edges[k] = [2]int{u, v}
		if u == v {
			loops++
			continue
		}
		set[[2]int{min(u, v), max(u, v)}] = true
	}
	g, err := FromEdges(n, edges)
	require.NoError(t, err)
	if g.NumEdges() != len(set) || g.Cleanup().SelfLoops != loops || g.Cleanup().Duplicates != len(edges)-loops-len(set) {
		t.Errorf("%d edges, cleanup %+v; want %d edges, %d loops", g.NumEdges(), g.Cleanup(), len(set), loops)
	}
	for _, e := range g.Edges() {
		if !set[e] {
			t.Errorf("edge %v not in input", e)
		}
	}
	for i := 0; i < n; i++ {
		nb := g.Neighbors(i)
		for k := 1; k < len(nb); k++ {
			if nb[k] <= nb[k-1] {
				t.Fatalf("neighbours of %d not strictly ascending: %v", i, nb)
			}
		}
	}
}

func TestHomophily(t *testing.T) {
	// Edges 0-1, 1-2, 2-3, 0-2; node 3 unlabelled.
	g, _ := FromEdges(4, [][2]int{{0, 1}, {1, 2}, {2, 3}, {0, 2}})
	h, err := g.Homophily([]int{0, 0, 1, -1})
	if err != nil || h != 1.0/3 {
		t.Errorf("homophily %v (%v), want 1/3 (0-1 same; 1-2, 0-2 differ; 2-3 unknown)", h, err)
	}
	h, _ = g.Homophily([]int{5, 5, 5, 5})
	if h != 1 {
		t.Errorf("homophily of a constant labelling %v, want 1", h)
	}
	h, _ = g.Homophily([]int{0, 1, 0, 1})
	if h != 0.25 {
		t.Errorf("homophily %v, want 1/4 (0-1, 1-2, 2-3 differ; 0-2 same)", h)
	}
	if _, err := g.Homophily([]int{0, 1}); err == nil || !strings.Contains(err.Error(), "2 labels for 4 nodes") {
		t.Errorf("error %v", err)
	}
	if _, err := g.Homophily([]int{0, -1, -1, 0}); err == nil || !strings.Contains(err.Error(), "no edge has two labelled ends") {
		t.Errorf("error %v", err)
	}
}

// TestFingerprint: the fingerprint depends on the structure only (edge
// order, duplicates and direction do not change it), and changes with
// one edge or the node count.
func TestFingerprint(t *testing.T) {
	mk := func(n int, es [][2]int) uint64 {
		g, err := FromEdges(n, es)
		require.NoError(t, err)
		return g.Fingerprint()
	}
	a := mk(5, [][2]int{{0, 1}, {1, 2}, {3, 4}})
	if b := mk(5, [][2]int{{4, 3}, {2, 1}, {1, 0}, {0, 1}}); a != b {
		t.Errorf("same graph, other edge list: %x != %x", a, b)
	}
	if b := mk(5, [][2]int{{0, 1}, {1, 2}, {2, 4}}); a == b {
		t.Error("one edge moved, same fingerprint")
	}
	if b := mk(6, [][2]int{{0, 1}, {1, 2}, {3, 4}}); a == b {
		t.Error("one more node, same fingerprint")
	}
}
