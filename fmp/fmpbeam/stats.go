package fmpbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Stats describes the graph a pipeline read: what the node files hold
// (NodeStats) and, once the matrix is built, its edges (BuildMatrix).
type Stats struct {
	// Nodes is n; Blocks the number of blocks.
	Nodes  int64 `json:"nodes"`
	Blocks int64 `json:"blocks"`
	// Groups counts the known members of each group, Labelled the nodes
	// with a known label; Train, Val and Test the splits' sizes.
	Groups           []int64 `json:"groups"`
	Labelled         int64   `json:"labelled"`
	Train, Val, Test int64
	// Edges counts the undirected edges after cleaning; SelfLoops and
	// Duplicates the edges the edge files held that were dropped (as
	// graph.FromEdges drops them); Isolated the nodes without an edge.
	Edges      int64 `json:"edges"`
	SelfLoops  int64 `json:"self_loops_dropped"`
	Duplicates int64 `json:"duplicates_dropped"`
	Isolated   int64 `json:"isolated"`
	// MaxBlock and FirstShort are the node files' check: the largest
	// block, and the first block with fewer than Layout.Size nodes.
	MaxBlock   int64 `json:"max_block"`
	FirstShort int64 `json:"first_short"`
}

func encStats(v Stats) ([]byte, error) { return json.Marshal(v) }

func decStats(b []byte) (Stats, error) {
	var v Stats
	err := json.Unmarshal(b, &v)
	return v, err
}

// merge adds o into s.
func (s Stats) merge(o Stats) Stats {
	s.Nodes += o.Nodes
	s.Blocks += o.Blocks
	for len(s.Groups) < len(o.Groups) {
		s.Groups = append(s.Groups, 0)
	}
	for g, c := range o.Groups {
		s.Groups[g] += c
	}
	s.Labelled += o.Labelled
	s.Train += o.Train
	s.Val += o.Val
	s.Test += o.Test
	s.Edges += o.Edges
	s.SelfLoops += o.SelfLoops
	s.Duplicates += o.Duplicates
	s.Isolated += o.Isolated
	s.MaxBlock = max(s.MaxBlock, o.MaxBlock)
	s.FirstShort = min(s.FirstShort, o.FirstShort)
	return s
}

func emptyStats() Stats { return Stats{MaxBlock: -1, FirstShort: math.MaxInt64} }

// statsFn merges Stats (a global combine).
type statsFn struct{}

func (statsFn) CreateAccumulator() Stats           { return emptyStats() }
func (statsFn) AddInput(a, x Stats) Stats          { return a.merge(x) }
func (statsFn) MergeAccumulators(a, b Stats) Stats { return a.merge(b) }
func (statsFn) ExtractOutput(a Stats) Stats        { return a }

// nodeStatsFn gives one block's part of the node statistics.
type nodeStatsFn struct{ Size int64 }

func (f *nodeStatsFn) ProcessElement(b int64, x Nodes) Stats {
	s := emptyStats()
	s.Nodes, s.Blocks, s.MaxBlock = int64(x.N), 1, b
	if int64(x.N) < f.Size {
		s.FirstShort = b
	}
	for k := int32(0); k < x.N; k++ {
		if g := x.Sens[k]; g >= 0 {
			for int(g) >= len(s.Groups) {
				s.Groups = append(s.Groups, 0)
			}
			s.Groups[g]++
		}
		if x.Label[k] >= 0 {
			s.Labelled++
		}
		switch x.Split[k] {
		case SplitTrain:
			s.Train++
		case SplitVal:
			s.Val++
		case SplitTest:
			s.Test++
		}
	}
	return s
}

// checkNodesFn checks that the node files numbered the nodes 0..n−1:
// every block but the last one full (each block checked its own ids
// already), and at least two groups.
type checkNodesFn struct{ Size int64 }

func (f *checkNodesFn) ProcessElement(s Stats) (Stats, error) {
	if s.Blocks == 0 {
		return s, fmt.Errorf("fmpbeam: the node files hold no node")
	}
	if s.Blocks != s.MaxBlock+1 || (s.FirstShort != math.MaxInt64 && s.FirstShort != s.MaxBlock) {
		missing := s.FirstShort * f.Size
		if s.Blocks != s.MaxBlock+1 {
			missing = -1
		}
		if missing >= 0 {
			return s, fmt.Errorf("fmpbeam: the node files do not number the nodes 0..n−1: nodes from %d on are missing before node %d (every node from 0 to the largest id needs a line)", missing, s.MaxBlock*f.Size)
		}
		return s, fmt.Errorf("fmpbeam: the node files do not number the nodes 0..n−1: %d of the %d blocks of %d ids up to the largest id have no node at all (every node from 0 to the largest id needs a line)", s.MaxBlock+1-s.Blocks, s.MaxBlock+1, f.Size)
	}
	return s, nil
}

// NodeStats returns the statistics of the node blocks (a singleton
// PCollection of Stats), checking that the nodes are numbered 0..n−1.
// It is the side input that tells later stages n.
func NodeStats(s beam.Scope, lay Layout, nodes beam.PCollection) beam.PCollection {
	s = s.Scope("NodeStats")
	parts := beam.ParDo(s, &nodeStatsFn{Size: lay.Size}, nodes)
	return beam.ParDo(s, &checkNodesFn{Size: lay.Size}, beam.Combine(s, &statsFn{}, parts))
}

// counter increments the byte counter of a shuffle: what the DoFn
// consuming the group received, keys included (see the README,
// "Bytes shuffled").
func counter(ctx context.Context, name string, n int) {
	beam.NewCounter("fmpbeam", name).Inc(ctx, int64(n))
}

// keyed is the bytes of a KV<int64, T> element of the given value bytes:
// the varint key, the value's length prefix and the value.
func keyed(key int64, value int) int {
	return uvarintLen(uint64(key<<1)^uint64(key>>63)) + uvarintLen(uint64(value)) + value
}

// side reads a singleton side input taken as an iterable. It is empty
// only when the stage that computes it failed, and that stage's error is
// the job's: the DoFn reading it then emits nothing and returns nil.
// (Prism, after a failed bundle, may still run the stages downstream on
// its empty output; a DoFn failing there on a missing singleton would let
// that message race the real one to be the job's error.)
func side[T any](it func(*T) bool) (T, bool) {
	var v T
	ok := it(&v)
	return v, ok
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(Stats{}), encStats, decStats)
	register.Combiner3[Stats, Stats, Stats](&statsFn{})
	register.DoFn2x1[int64, Nodes, Stats](&nodeStatsFn{})
	register.DoFn1x2[Stats, Stats, error](&checkNodesFn{})
}
