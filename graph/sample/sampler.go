package sample

import (
	"fmt"
	"slices"
	"sync"

	"github.com/fairmp/fairmp/graph"
)

// Batch is one sampled mini-batch.
type Batch struct {
	// Nodes holds the global ids of every node the batch needs, in hop
	// order: the targets first (Nodes[:Sizes[0]], in batch order), then the
	// nodes first reached at hop 1 (Nodes[Sizes[0]:Sizes[1]]), ..., hop L
	// (up to Sizes[L] == len(Nodes)). No id repeats.
	Nodes []int
	// Sizes has L+1 entries, non-decreasing, Sizes[L] == len(Nodes).
	// Sizes[h] is the number of nodes the batch reached within h hops.
	Sizes []int
	// Blocks[l], l = 0..L-1, is the propagation matrix of model layer l+1
	// (Blocks[0] is the input-side layer): a Sizes[L-1-l] × Sizes[L-l]
	// *graph.Matrix whose row i is node Nodes[i] and column j is node
	// Nodes[j]. Row i holds a[v,v] at column i (when a stores it) and, for
	// each sampled neighbour u of v = Nodes[i], a[v,u]·deg(v)/k(v) at u's
	// column (see the package documentation).
	Blocks []*graph.Matrix
}

// Sampler draws seeded neighbour-sampled mini-batches (PyG NeighborLoader
// semantics, see the package documentation) from a fixed propagation
// matrix. It is safe for concurrent use: each concurrent call borrows its
// own scratch (an n-entry int32 table, 4·n bytes, allocated the first time
// that many calls overlap and then reused, never released while the
// Sampler lives).
type Sampler struct {
	a       *graph.Matrix
	n       int
	indptr  []int
	indices []int32
	vals    []float64
	fanouts []int
	cfg     Config

	mu   sync.Mutex
	free []*scratch
}

// scratch is one call's working memory. local has n entries, -1 for a node
// outside the batch being built, else its index in nodes; every entry set
// during a call is reset to -1 before the scratch is returned.
type scratch struct {
	local  []int32
	nodes  []int32
	chunk  []int // the batch's targets (Batch only)
	orig   []int // their positions in the caller's targets (Batch only)
	rows   []int // coordinate triplets of the rows of Nodes[:Sizes[L-1]], in row order
	cols   []int
	vals   []float64
	rowEnd []int // rowEnd[i] = number of triplets of rows 0..i
	chosen []int32
	set    map[int32]struct{}
}

// floydLinear is the largest sample size for which Floyd's algorithm
// checks membership by a linear scan instead of a map.
const floydLinear = 32

// NewSampler samples from the rows of a: a square n × n sparse propagation
// matrix of the whole graph (for example graph.GCNNorm of the graph:
// diagonal = self-loop weight, off-diagonal = neighbours). Row v's
// off-diagonal entries are v's neighbours. It returns an error for an
// invalid cfg, a nil matrix or a matrix that is not square. cfg is copied.
func NewSampler(a *graph.Matrix, cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sample: NewSampler: %w", err)
	}
	if a == nil {
		return nil, fmt.Errorf("sample: NewSampler: the matrix is nil, want a square n × n propagation matrix")
	}
	r, c := a.Dims()
	if r != c {
		return nil, fmt.Errorf("sample: NewSampler: the matrix is %d × %d, want a square n × n propagation matrix", r, c)
	}
	cfg.Fanouts = slices.Clone(cfg.Fanouts)
	return &Sampler{a: a, n: r, indptr: a.Indptr(), indices: a.Indices(), vals: a.Values64(),
		fanouts: cfg.Fanouts, cfg: cfg}, nil
}

// Config returns the sampler's configuration (a copy).
func (s *Sampler) Config() Config {
	c := s.cfg
	c.Fanouts = slices.Clone(c.Fanouts)
	return c
}

// Matrix returns the propagation matrix the sampler samples from.
func (s *Sampler) Matrix() *graph.Matrix { return s.a }

// NumBatches returns the number of batches of an epoch over targets:
// ⌈len(targets)/BatchSize⌉.
func (s *Sampler) NumBatches(targets []int) int {
	return (len(targets) + s.cfg.BatchSize - 1) / s.cfg.BatchSize
}

// Batch returns batch i (0-based) of epoch epoch (>= 0) over targets. The
// targets are permuted (when Shuffle) by a pseudo-random permutation keyed
// by (Seed, epoch), cut into BatchSize chunks (the last one shorter), and
// chunk i is sampled with randomness seeded by (Seed, epoch, i) only, so
// any batch can be produced alone, in any order, in parallel, and is
// bit-identical for the same inputs. Without Shuffle chunk i is
// targets[i·BatchSize : (i+1)·BatchSize] in order.
//
// Batch costs O(BatchSize + the sampled nodes and edges), never
// O(len(targets)) or O(n): the permutation is evaluated position by
// position. Consequently it checks only its own chunk: it returns an error
// for an empty targets, an epoch < 0, i out of [0, NumBatches(targets)), a
// target of the chunk out of [0, n) and a target repeated within the
// chunk. A target repeated in two different chunks is not detected; call
// CheckTargets once per target list to rule that out.
func (s *Sampler) Batch(targets []int, epoch, i int) (*Batch, error) {
	const fn = "Sampler.Batch"
	if len(targets) == 0 {
		return nil, fmt.Errorf("sample: %s: no targets, want at least one", fn)
	}
	if epoch < 0 {
		return nil, fmt.Errorf("sample: %s: epoch %d, want >= 0", fn, epoch)
	}
	nb := s.NumBatches(targets)
	if i < 0 || i >= nb {
		return nil, fmt.Errorf("sample: %s: batch %d, want an index in [0, %d) (%d targets in batches of %d)", fn, i, nb, len(targets), s.cfg.BatchSize)
	}
	sc := s.get()
	defer s.put(sc)
	sc.chunk, sc.orig = chunk(targets, s.cfg, epoch, i, sc.chunk[:0], sc.orig[:0])
	return s.sample(sc, sc.chunk, sc.orig, batchSeed(s.cfg.Seed, epoch, i), fn)
}

// chunk appends the targets of batch i of an epoch to dst, and their
// positions in targets to orig.
func chunk(targets []int, cfg Config, epoch, i int, dst, orig []int) ([]int, []int) {
	lo := i * cfg.BatchSize
	hi := min(lo+cfg.BatchSize, len(targets))
	var p perm
	if cfg.Shuffle {
		p = newPerm(len(targets), permKey(cfg.Seed, epoch))
	}
	for q := lo; q < hi; q++ {
		o := q
		if cfg.Shuffle {
			o = p.at(q)
		}
		dst = append(dst, targets[o])
		orig = append(orig, o)
	}
	return dst, orig
}

// Chunk returns the target nodes of batch i of an epoch, in batch order:
// the rule of Sampler.Batch (the seeded permutation when cfg.Shuffle, then
// chunks of cfg.BatchSize), without sampling any neighbour, for models
// that need none (an MLP). Only BatchSize, Shuffle and Seed are used. It
// returns an error for an invalid BatchSize, a negative epoch or a batch
// index out of range.
func Chunk(targets []int, cfg Config, epoch, i int) ([]int, error) {
	if cfg.BatchSize < 1 {
		return nil, fmt.Errorf("sample: Chunk: BatchSize = %d, want >= 1", cfg.BatchSize)
	}
	if epoch < 0 {
		return nil, fmt.Errorf("sample: Chunk: epoch %d, want >= 0", epoch)
	}
	nb := (len(targets) + cfg.BatchSize - 1) / cfg.BatchSize
	if i < 0 || i >= nb {
		return nil, fmt.Errorf("sample: Chunk: batch %d, want an index in [0, %d) (%d targets in batches of %d)", i, nb, len(targets), cfg.BatchSize)
	}
	out, _ := chunk(targets, cfg, epoch, i, nil, nil)
	return out, nil
}

// Sample samples the given target nodes as one batch (in the given order,
// whatever their number; BatchSize and Shuffle are not used) with
// randomness seeded by seed only. It returns an error for an empty
// targets, a target out of [0, n) and a repeated target.
func (s *Sampler) Sample(targets []int, seed int64) (*Batch, error) {
	const fn = "Sampler.Sample"
	if len(targets) == 0 {
		return nil, fmt.Errorf("sample: %s: no targets, want at least one", fn)
	}
	sc := s.get()
	defer s.put(sc)
	return s.sample(sc, targets, nil, sampleSeed(seed), fn)
}

// CheckTargets returns an error naming the first target out of [0, n) or
// repeated in targets (or for an empty list). It takes O(len(targets))
// time; Batch, which checks only its own chunk, relies on it for repeats
// across chunks.
func (s *Sampler) CheckTargets(targets []int) error {
	if len(targets) == 0 {
		return fmt.Errorf("sample: Sampler.CheckTargets: no targets, want at least one")
	}
	sc := s.get()
	defer s.put(sc)
	defer func() {
		for _, v := range sc.nodes {
			sc.local[v] = -1
		}
		sc.nodes = sc.nodes[:0]
	}()
	sc.nodes = sc.nodes[:0]
	return s.addTargets(sc, targets, nil, "Sampler.CheckTargets")
}

func (s *Sampler) get() *scratch {
	s.mu.Lock()
	if k := len(s.free); k > 0 {
		sc := s.free[k-1]
		s.free = s.free[:k-1]
		s.mu.Unlock()
		return sc
	}
	s.mu.Unlock()
	local := make([]int32, s.n)
	for i := range local {
		local[i] = -1
	}
	return &scratch{local: local}
}

func (s *Sampler) put(sc *scratch) {
	s.mu.Lock()
	s.free = append(s.free, sc)
	s.mu.Unlock()
}

// addTargets appends the targets to sc.nodes and records their local ids,
// checking ids and repeats. orig (nil for the identity) gives each
// target's position in the caller's list, for the error messages.
func (s *Sampler) addTargets(sc *scratch, targets, orig []int, fn string) error {
	pos := func(j int) int {
		if orig != nil {
			return orig[j]
		}
		return j
	}
	for j, t := range targets {
		if t < 0 || t >= s.n {
			return fmt.Errorf("sample: %s: targets[%d] = %d, want a node id in [0, %d)", fn, pos(j), t, s.n)
		}
		if l := sc.local[t]; l >= 0 {
			return fmt.Errorf("sample: %s: targets[%d] = %d repeats targets[%d], want distinct targets", fn, pos(j), t, pos(int(l)))
		}
		sc.local[t] = int32(len(sc.nodes))
		sc.nodes = append(sc.nodes, int32(t))
	}
	return nil
}

// sample builds the batch of targets with the generator state seed.
func (s *Sampler) sample(sc *scratch, targets, orig []int, seed uint64, fn string) (*Batch, error) {
	sc.nodes = sc.nodes[:0]
	defer func() {
		for _, v := range sc.nodes {
			sc.local[v] = -1
		}
		sc.nodes = sc.nodes[:0]
	}()
	if err := s.addTargets(sc, targets, orig, fn); err != nil {
		return nil, err
	}
	sc.rows, sc.cols, sc.vals, sc.rowEnd = sc.rows[:0], sc.cols[:0], sc.vals[:0], sc.rowEnd[:0]

	L := len(s.fanouts)
	sizes := make([]int, L+1)
	sizes[0] = len(targets)
	r := rng{seed}
	start := 0
	for h := 0; h < L; h++ {
		end := len(sc.nodes)
		for i := start; i < end; i++ {
			s.expand(sc, &r, i, s.fanouts[h])
		}
		sizes[h+1] = len(sc.nodes)
		start = end
	}

	b := &Batch{Nodes: make([]int, len(sc.nodes)), Sizes: sizes, Blocks: make([]*graph.Matrix, L)}
	for i, v := range sc.nodes {
		b.Nodes[i] = int(v)
	}
	// One CSR copy of the entries, shared by every block: block l is its
	// first sizes[L-1-l] rows (blocks are immutable). Each row's local
	// column ids are sorted (a row holds at most fan-out + 1 entries).
	nr := sizes[L-1]
	m := sc.rowEnd[nr-1]
	indptr := make([]int, nr+1)
	indices := make([]int32, m)
	vals := make([]float64, m)
	for i := 0; i < nr; i++ {
		lo, hi := indptr[i], sc.rowEnd[i]
		indptr[i+1] = hi
		for p := lo; p < hi; p++ {
			c, v := int32(sc.cols[p]), sc.vals[p]
			q := p
			for ; q > lo && indices[q-1] > c; q-- {
				indices[q], vals[q] = indices[q-1], vals[q-1]
			}
			indices[q], vals[q] = c, v
		}
	}
	for l := 0; l < L; l++ {
		rows, cols := sizes[L-1-l], sizes[L-l]
		e := indptr[rows]
		blk, err := graph.NewMatrixCSR(rows, cols, indptr[:rows+1:rows+1], indices[:e:e], vals[:e:e])
		if err != nil {
			return nil, fmt.Errorf("sample: %s: block %d: %w", fn, l, err)
		}
		b.Blocks[l] = blk
	}
	return b, nil
}

// expand draws the neighbours of node i of the batch (fan-out f) and
// appends its row's triplets: the diagonal first, then the neighbours in
// ascending global id; neighbours new to the batch are appended to nodes
// in that order.
func (s *Sampler) expand(sc *scratch, r *rng, i, f int) {
	v := sc.nodes[i]
	lo, hi := s.indptr[v], s.indptr[v+1]
	dpos, hasDiag := slices.BinarySearch(s.indices[lo:hi], v)
	deg := hi - lo
	if hasDiag {
		deg--
		sc.rows = append(sc.rows, i)
		sc.cols = append(sc.cols, i)
		sc.vals = append(sc.vals, s.vals[lo+dpos])
	}
	k := deg
	if f != -1 && f < deg {
		k = f
	}
	if k == deg {
		for p := lo; p < hi; p++ {
			if hasDiag && p == lo+dpos {
				continue
			}
			s.add(sc, i, s.indices[p], s.vals[p])
		}
	} else {
		choose(sc, r, deg, k)
		scale := float64(deg) / float64(k)
		for _, q := range sc.chosen {
			p := lo + int(q)
			if hasDiag && int(q) >= dpos {
				p++
			}
			s.add(sc, i, s.indices[p], s.vals[p]*scale)
		}
	}
	sc.rowEnd = append(sc.rowEnd, len(sc.rows))
}

// add appends the triplet (i, local id of u, w), giving u a local id if it
// is new to the batch.
func (s *Sampler) add(sc *scratch, i int, u int32, w float64) {
	lu := sc.local[u]
	if lu < 0 {
		lu = int32(len(sc.nodes))
		sc.local[u] = lu
		sc.nodes = append(sc.nodes, u)
	}
	sc.rows = append(sc.rows, i)
	sc.cols = append(sc.cols, int(lu))
	sc.vals = append(sc.vals, w)
}

// choose sets sc.chosen to a uniform k-subset of [0, deg) (0 < k < deg),
// ascending, by Floyd's algorithm (Bentley and Floyd 1987): O(k) draws,
// membership by a linear scan for small k and a map otherwise.
func choose(sc *scratch, r *rng, deg, k int) {
	sc.chosen = sc.chosen[:0]
	if k <= floydLinear {
		for j := deg - k; j < deg; j++ {
			t := int32(r.intn(uint64(j + 1)))
			if slices.Contains(sc.chosen, t) {
				t = int32(j)
			}
			sc.chosen = append(sc.chosen, t)
		}
	} else {
		if sc.set == nil {
			sc.set = make(map[int32]struct{}, k)
		}
		clear(sc.set)
		for j := deg - k; j < deg; j++ {
			t := int32(r.intn(uint64(j + 1)))
			if _, ok := sc.set[t]; ok {
				t = int32(j)
			}
			sc.set[t] = struct{}{}
			sc.chosen = append(sc.chosen, t)
		}
	}
	slices.Sort(sc.chosen)
}
