package datasets

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

// Sizes of the independently seeded units of SyntheticLarge's random
// streams. They are part of the output's definition: changing them changes
// the graph a seed gives.
const (
	largeEdgeChunk    = 1 << 16 // edges per edge chunk
	largeFeatureBlock = 1 << 10 // rows per feature block
)

// SyntheticLarge generates the same model as Synthetic, for graphs of
// tens of millions of nodes and hundreds of millions of edges: every
// SyntheticConfig field has the same meaning (group and label per node,
// an edge from a uniform node u to a uniform node of the (label, group)
// block chosen by the two homophily coins, features x = LabelSignal·(2y−1)·a
// + GroupSignal·(2s−1)·b + Noise·ε, a random split by SplitFractions). It
// differs from Synthetic in three ways:
//
//   - The random stream is different (the distribution is the same): the
//     nodes, each chunk of 65,536 edges and each block of 1,024 feature
//     rows have their own PCG generator seeded from (Seed, chunk), so the
//     chunks run in parallel on every core, and the result is
//     bit-identical for the same config whatever GOMAXPROCS is. The same
//     config gives a different graph from Synthetic's.
//   - Exactly round(N·MeanDegree/2) edges are drawn, and self-loops and
//     repeated edges are dropped instead of redrawn, so the graph has at
//     most that many edges; Dataset.Warnings says how many were dropped
//     (a fraction of about MeanDegree/(2·block size), negligible for
//     large graphs).
//   - The features are not kept in memory: they are streamed, as float32,
//     to a feature file at featuresPath (package graph/features; written
//     to a temporary file beside it and renamed when complete). The returned
//     Dataset has Features == nil, NumFeatures = cfg.NumFeatures and
//     FeatureNames x0, x1, ...; open the features with
//     features.Open(featuresPath), which maps the file without reading it
//     into memory.
//
// The edge list is never held. The edge stream is generated twice from
// the same seeds: the first pass counts each node's degree into the CSR
// row pointers, the second places each edge's two ends into the CSR
// index array; then every row is sorted, its duplicates dropped and the
// rows compacted in place, and graph.FromCSR takes the arrays over.
//
// Memory: the graph's own arrays (8·(N+1) bytes of row pointers, 8 bytes
// per edge of indices), Labels and Sens (16·N bytes), the (label, group)
// blocks (4·N bytes), the split (about 16·N bytes while it is made) and
// a few MB of buffers: at N = 10 million and 100 million edges about 1.3
// GB, plus whatever page cache the operating system gives the features
// file (2.56 GB at 64 features). Time is O(N·NumFeatures + edges).
//
// progress, if not nil, receives a line as each stage ends (nodes, the
// two edge passes, the sorted rows, the features, the split), with the
// time since the start: a 10-million-node graph takes minutes.
//
// It returns an error if cfg does not validate, if a populated (label,
// group) block can reach no populated block (as Synthetic), or if the
// features file cannot be written (naming the path); no features file is
// left behind on error.
func SyntheticLarge(cfg SyntheticConfig, featuresPath string, progress io.Writer) (*Dataset, error) {
	start := time.Now()
	report := func(format string, args ...any) {
		if progress != nil {
			fmt.Fprintf(progress, "SyntheticLarge: %s (%.1f s)\n", fmt.Sprintf(format, args...), time.Since(start).Seconds())
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.GroupFracs != nil {
		return nil, fmt.Errorf("datasets: SyntheticLarge: SyntheticConfig.GroupFracs is set; SyntheticLarge draws two groups (GroupFrac), Synthetic draws more")
	}
	if cfg.Classes != 2 {
		return nil, fmt.Errorf("datasets: SyntheticLarge: SyntheticConfig.Classes = %d; SyntheticLarge draws two classes, Synthetic draws more", cfg.Classes)
	}
	n, d := cfg.N, cfg.NumFeatures
	m := int(math.Round(float64(n) * cfg.MeanDegree / 2))
	if m > math.MaxInt/2 {
		return nil, fmt.Errorf("datasets: SyntheticLarge: %d edges (N·MeanDegree/2) exceed this machine's %d-bit int", m, strconv.IntSize)
	}
	// Fail on an unwritable path before spending time on the graph.
	w, err := features.Create(featuresPath, n, d)
	if err != nil {
		return nil, fmt.Errorf("datasets: SyntheticLarge: features file: %w", err)
	}
	defer w.Abort() // removes the temporary file unless Close succeeded

	// Nodes: group, then label; block ids 2y+s.
	rng := largeRNG(cfg.Seed, 1, 0)
	sens := make([]int, n)
	labels := make([]int, n)
	blockOf := make([]uint8, n)
	var sizes [4]int
	for i := 0; i < n; i++ {
		sens[i], labels[i] = drawNode(rng.Float64, cfg)
		blockOf[i] = uint8(2*labels[i] + sens[i])
		sizes[blockOf[i]]++
	}
	var blocks [4][]int32
	for b := range blocks {
		blocks[b] = make([]int32, 0, sizes[b])
	}
	for i, b := range blockOf {
		blocks[b] = append(blocks[b], int32(i))
	}
	if m > 0 {
		if err := checkBlocksReachable("SyntheticLarge", cfg, sizes[:]); err != nil {
			return nil, err
		}
	}
	report("%d nodes: groups and labels drawn", n)

	g, loops, dups, err := largeEdges(cfg, m, blockOf, &blocks, report)
	if err != nil {
		return nil, err
	}
	blockOf, blocks = nil, [4][]int32{}

	if err := largeFeatures(cfg, w, labels, sens); err != nil {
		return nil, fmt.Errorf("datasets: SyntheticLarge: features file: %w", err)
	}
	report("%d × %d features written", n, d)
	names := make([]string, d)
	for k := range names {
		names[k] = "x" + strconv.Itoa(k)
	}
	split, err := RandomSplit(labels, cfg.SplitFractions, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("datasets: SyntheticLarge: features file: %w", err)
	}
	ds := &Dataset{
		Name:         "synthetic-large",
		Graph:        g,
		NumFeatures:  d,
		FeatureNames: names,
		Labels:       labels,
		Sens:         sens,
		Split:        split,
	}
	if loops+dups > 0 {
		ds.warnf("SyntheticLarge: %d of the %d edges drawn were dropped (%d self-loops, %d duplicates); the graph has %d edges", loops+dups, m, loops, dups, g.NumEdges())
	}
	return ds, nil
}

// checkBlocksReachable returns an error if a populated (label, group)
// block can reach no populated block: the block choice of an edge from it
// would never end. sizes[G·y + s] is the size of block (y, s), G =
// len(sizes)/Classes.
func checkBlocksReachable(who string, cfg SyntheticConfig, sizes []int) error {
	C := cfg.Classes
	G := len(sizes) / C
	for b, size := range sizes {
		if size == 0 {
			continue
		}
		y, s := b/G, b%G
		p := 0.0
		for ty := 0; ty < C; ty++ {
			py := cfg.LabelHomophily
			if ty != y {
				py = (1 - py) / float64(C-1)
			}
			for ts := 0; ts < G; ts++ {
				ps := cfg.SensHomophily
				if ts != s {
					ps = (1 - ps) / float64(G-1)
				}
				if sizes[G*ty+ts] > 0 {
					p += py * ps
				}
			}
		}
		if p == 0 {
			return fmt.Errorf("datasets: %s: nodes with label %d and group %d can get no edge: every block LabelHomophily = %v and SensHomophily = %v allow is empty; change a knob or raise N", who, y, s, cfg.LabelHomophily, cfg.SensHomophily)
		}
	}
	return nil
}

// largeEdges draws the m edges twice (degree count, then placement),
// sorts and deduplicates the rows and builds the graph. It returns the
// numbers of self-loops and duplicate edges dropped.
func largeEdges(cfg SyntheticConfig, m int, blockOf []uint8, blocks *[4][]int32, report func(string, ...any)) (*graph.Graph, int, int, error) {
	n := cfg.N
	hy, hs := cfg.LabelHomophily, cfg.SensHomophily
	// draw calls emit for every edge of chunk c that is not a self-loop
	// and returns the number of self-loops.
	draw := func(c int, emit func(u, v int)) int {
		rng := largeRNG(cfg.Seed, 2, uint64(c))
		loops := 0
		for e := c * largeEdgeChunk; e < min((c+1)*largeEdgeChunk, m); e++ {
			u := rng.IntN(n)
			var blk []int32
			for {
				b := blockOf[u]
				if rng.Float64() >= hy {
					b ^= 2
				}
				if rng.Float64() >= hs {
					b ^= 1
				}
				if blk = blocks[b]; len(blk) > 0 {
					break
				}
			}
			v := int(blk[rng.IntN(len(blk))])
			if u == v {
				loops++
				continue
			}
			emit(u, v)
		}
		return loops
	}
	chunks := (m + largeEdgeChunk - 1) / largeEdgeChunk

	// Pass 1: degrees, then inclusive prefix sums: indptr[i] is the end
	// of row i, indptr[n] the total.
	indptr := make([]int, n+1)
	var loops atomic.Int64
	parallelFor(chunks, func(c int) {
		l := draw(c, func(u, v int) {
			atomicAddInt(&indptr[u], 1)
			atomicAddInt(&indptr[v], 1)
		})
		loops.Add(int64(l))
	})
	for i := 1; i < n; i++ {
		indptr[i] += indptr[i-1]
	}
	raw := indptr[n-1]
	indptr[n] = raw
	report("%d edges drawn, degrees counted (pass 1 of 2)", m)

	// Pass 2: each end goes to the next free slot from the row's end;
	// afterwards indptr[i] is the start of row i.
	indices := make([]int32, raw)
	parallelFor(chunks, func(c int) {
		draw(c, func(u, v int) {
			indices[atomicAddInt(&indptr[u], -1)] = int32(v)
			indices[atomicAddInt(&indptr[v], -1)] = int32(u)
		})
	})

	report("edges placed (pass 2 of 2)")

	// Sort and deduplicate the rows: in parallel over ranges of rows,
	// each compacted to its own start, then the ranges moved together.
	ranges := min(n, 64*runtime.GOMAXPROCS(0))
	lo := make([]int, ranges+1)   // first row of each range
	from := make([]int, ranges)   // original start of each range
	newEnd := make([]int, ranges) // end of each range once compacted
	for k := range lo {
		lo[k] = int(int64(n) * int64(k) / int64(ranges))
	}
	for k := range from {
		from[k] = indptr[lo[k]]
	}
	parallelFor(ranges, func(k int) {
		w, start := from[k], from[k]
		for i := lo[k]; i < lo[k+1]; i++ {
			end := indptr[i+1]
			row := indices[start:end]
			slices.Sort(row)
			for j, v := range row {
				if j > 0 && v == row[j-1] {
					continue
				}
				indices[w] = v
				w++
			}
			indptr[i+1] = w
			start = end
		}
		newEnd[k] = w
	})
	dst := 0
	for k := 0; k < ranges; k++ {
		shift := from[k] - dst
		dst += copy(indices[dst:], indices[from[k]:newEnd[k]])
		for i := lo[k] + 1; i <= lo[k+1]; i++ {
			indptr[i] -= shift
		}
	}
	indices = indices[:dst:dst]
	g, err := graph.FromCSR(indptr, indices)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("datasets: SyntheticLarge: %w", err)
	}
	report("rows sorted and deduplicated, graph checked (%d edges)", g.NumEdges())
	return g, int(loops.Load()), (raw - dst) / 2, nil
}

// largeFeatures streams the feature rows to w, generating blocks of rows
// in parallel and writing them in order.
func largeFeatures(cfg SyntheticConfig, w *features.Writer, labels, sens []int) error {
	n, d := cfg.N, cfg.NumFeatures
	rng := largeRNG(cfg.Seed, 3, 0)
	a := unitVector(rng.NormFloat64, d)
	b := unitVector(rng.NormFloat64, d)
	nb := (n + largeFeatureBlock - 1) / largeFeatureBlock
	workers := runtime.GOMAXPROCS(0)
	bufs := make([][]float32, workers)
	for j := range bufs {
		bufs[j] = make([]float32, largeFeatureBlock*d)
	}
	for b0 := 0; b0 < nb; b0 += workers {
		k := min(workers, nb-b0)
		parallelFor(k, func(j int) {
			blk := b0 + j
			rng := largeRNG(cfg.Seed, 4, uint64(blk))
			buf := bufs[j]
			for i := blk * largeFeatureBlock; i < min((blk+1)*largeFeatureBlock, n); i++ {
				ly := cfg.LabelSignal * float64(2*labels[i]-1)
				gs := cfg.GroupSignal * float64(2*sens[i]-1)
				row := buf[(i-blk*largeFeatureBlock)*d:][:d]
				for c := range row {
					row[c] = float32(ly*a[c] + gs*b[c] + cfg.Noise*rng.NormFloat64())
				}
			}
		})
		for j := 0; j < k; j++ {
			blk := b0 + j
			rows := min((blk+1)*largeFeatureBlock, n) - blk*largeFeatureBlock
			for r := 0; r < rows; r++ {
				if err := w.WriteRow(bufs[j][r*d : (r+1)*d]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// parallelFor runs work(0..count-1) on up to GOMAXPROCS goroutines, in no
// particular order.
func parallelFor(count int, work func(int)) {
	workers := min(runtime.GOMAXPROCS(0), count)
	if workers <= 1 {
		for c := 0; c < count; c++ {
			work(c)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= count {
					return
				}
				work(c)
			}
		}()
	}
	wg.Wait()
}

// atomicAddInt adds delta to *p atomically and returns the new value.
func atomicAddInt(p *int, delta int) int {
	if unsafe.Sizeof(*p) == 8 {
		return int(atomic.AddInt64((*int64)(unsafe.Pointer(p)), int64(delta)))
	}
	return int(atomic.AddInt32((*int32)(unsafe.Pointer(p)), int32(delta)))
}

// largeRNG returns the PCG generator of SyntheticLarge's stream
// (stream, k) for seed: 1 the nodes, 2 the edge chunks, 3 the feature
// directions, 4 the feature blocks. The 128-bit state is a SplitMix64 hash
// of all three, so nearby seeds and chunks give unrelated streams.
func largeRNG(seed int64, stream, k uint64) *rand.Rand {
	h := splitMix64(uint64(seed) ^ splitMix64(stream<<56^k))
	return rand.New(rand.NewPCG(h, splitMix64(h^0x5851f42d4c957f2d)))
}

func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
