package fmpbeam

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// TestWireWidths: a step's product carries one shared column per λs and
// C−1 per setting still stepping with λs > 0; the default frontier's
// 20 settings of 2 classes take 21 columns instead of 40.
func TestWireWidths(t *testing.T) {
	// fmpSettings at C = 3: λs 1 (K 10, 3, 10, 7), λs 0 (K 4), λs 0.5 (K 2).
	for k, want := range map[int]int{0: 1 + 4*2 + 1 + 2, 2: 1 + 4*2, 3: 1 + 3*2, 7: 1 + 2*2, 9: 1 + 2*2} {
		assert.Equal(t, want, wireOf(k, fmpSettings(), 3).Width, "step %d", k)
	}
	fc := fmp.DefaultFrontierConfig()
	plan, err := NewPlan(fmp.DefaultConfig(), &fc)
	require.NoError(t, err)
	require.Len(t, plan.Settings, 20)
	assert.Equal(t, 21, wireOf(0, plan.Settings, 2).Width)
}

// TestWirePackUnpack: settings of one λs whose rows have the same class
// sums get their rows back from the packed columns (an identity
// product), to rounding.
func TestWirePackUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	settings := fmpSettings()
	const n, c = 5, 3
	S := len(settings)
	x := State{N: n, C: c, S: int32(S), F: make([]float64, n*S*c)}
	for i := 0; i < n; i++ {
		sum := 4*rng.Float64() - 2
		for s := range settings {
			row := x.F[(i*S+s)*c : (i*S+s+1)*c]
			last := sum
			for j := 0; j < c-1; j++ {
				row[j] = 10*rng.Float64() - 5
				last -= row[j]
			}
			row[c-1] = last
		}
	}
	w := wireOf(0, settings, c)
	_, packed := (&packFn{K: 0, Settings: settings}).ProcessElement(0, x)
	require.Equal(t, w.Width, int(packed.C))
	af := make([]float64, c)
	for i := 0; i < n; i++ {
		for s := range settings {
			if w.Sigma[s] < 0 {
				continue
			}
			w.unpack(af, packed.V[i*w.Width:(i+1)*w.Width], s)
			testutil.AllClose(t, fmt.Sprintf("node %d setting %d", i, s), af, x.F[(i*S+s)*c:(i*S+s+1)*c], 1e-13, 0)
		}
	}
}

// TestPartialCoder: a Partial decodes to itself, wide (8 bytes a value)
// and narrow (4 bytes a value, float32 values exactly).
func TestPartialCoder(t *testing.T) {
	v := []float64{1.0 / 3, -2.5e-9, 7, 0}
	wide := Partial{From: 3, N: 0, C: 2, Idx: []int32{1, 4}, V: v}
	got, err := decPartial(encPartial(wide))
	require.NoError(t, err)
	assert.Equal(t, wide, got)

	narrow := Partial{From: 3, C: 2, Narrow: true, Idx: []int32{1, 4}, V: make([]float64, len(v))}
	for k, y := range v {
		narrow.V[k] = float64(float32(y))
	}
	b := encPartial(narrow)
	assert.Equal(t, encodedSize(&wide)-4*len(v), len(b), "4 bytes a value")
	got, err = decPartial(b)
	require.NoError(t, err)
	assert.Equal(t, narrow, got)
	for k, y := range v {
		assert.InDelta(t, y, got.V[k], math.Abs(y)*0x1p-24, "value %d within float32 rounding", k)
	}
	_, err = decPartial(b[:len(b)-1])
	assert.Error(t, err, "a truncated narrow Partial")
}

// TestFMPFloat32Products: with the products rounded to float32, F^K
// stays within 1e-5 (absolute and relative) of Layer.Apply's float64
// result, for logits in [−2, 2] and every setting of fmpSettings (λf up
// to 16, τ down to 0.3, K up to 10): float32's rounding (6e-8 relative)
// grown by the steps, with a margin. The largest error is logged.
func TestFMPFloat32Products(t *testing.T) {
	ds := smallData(t)
	sens := append([]int(nil), ds.Sens...)
	dir := t.TempDir()
	require.NoError(t, WriteGraph(dir, 3, ds.Graph))
	require.NoError(t, WriteNodes(dir, 2, ds.Labels, sens, ds.Split))
	c := 2
	z := make([]float64, ds.N()*c)
	for i := range z {
		z[i] = float64((i*7919)%101)/25 - 2
	}
	require.NoError(t, WriteRows(dir, "logits", 2, ds.N(), c, func(i int, dst []float64) error {
		copy(dst, z[i*c:(i+1)*c])
		return nil
	}))
	settings := fmpSettings()
	lay := Layout{Size: 64}
	p, s := beam.NewPipelineWithRoot()
	nodes := ReadNodes(s, lay, dir+"/nodes-*.txt")
	st := NodeStats(s, lay, nodes)
	adj, _ := BuildMatrix(s, lay, NormOf(fmp.DefaultModelConfig(1, 2).Propagation), nodes, ReadEdges(s, lay, dir+"/edges-*.txt"), st)
	logits := ReadRows(s, lay, dir+"/logits-*.txt", "logits", nodes)
	out, _ := FMPWith(s, lay, FMPOptions{Float32Products: true}, settings, adj, nodes, logits, st)
	beam.ParDo0(s, &collectRowsFn{Key: "fmp32"}, out)
	run(t, p)

	got, width := rowsOf(t, "fmp32", ds.N())
	require.Equal(t, len(settings)*c, width)
	a := graph.NormalizedAdjacency(ds.Graph)
	worst := 0.0
	for k, cfg := range settings {
		l, err := fmp.New(a, sens, cfg)
		require.NoError(t, err)
		want, err := l.Apply(tensor.New(tensor.WithShape(ds.N(), c), tensor.WithBacking(append([]float64(nil), z...))))
		require.NoError(t, err)
		w := testutil.ToF64(want)
		col := make([]float64, ds.N()*c)
		for i := 0; i < ds.N(); i++ {
			copy(col[i*c:], got[i*width+k*c:i*width+(k+1)*c])
		}
		for i := range col {
			worst = max(worst, math.Abs(col[i]-w[i]))
		}
		testutil.AllClose(t, fmt.Sprintf("setting %d %+v", k, cfg), col, w, 1e-5, 1e-5)
	}
	t.Logf("float32 products: largest difference from Layer.Apply %.3g", worst)
}

// TestAdjBlockFactored: a block whose values are its row and column
// scales' products travels without them, as node degrees when every
// scale is 1/√(k + shift), else as the scales, and decodes to the same
// bits; a block with one value that is not falls back to sending the
// values; encodings whose parts do not fit are refused.
func TestAdjBlockFactored(t *testing.T) {
	block := func(rowScale, colScale []float64, shift float64) AdjBlock {
		a := AdjBlock{Lo: 3, N: 3, Row: []int64{0, 4, 9}, Ptr: []int32{0, 2, 5, 6},
			Col: []int32{0, 2, 0, 1, 2, 1}, RowScale: rowScale, ColScale: colScale, ScaleShift: shift}
		for r := range a.Row {
			for q := a.Ptr[r]; q < a.Ptr[r+1]; q++ {
				a.Val = append(a.Val, rowScale[r]*colScale[a.Col[q]])
			}
		}
		return a
	}
	roundTrip := func(t *testing.T, a AdjBlock) AdjBlock {
		got, err := decAdjBlock(encAdjBlock(a))
		require.NoError(t, err)
		require.Len(t, got.Val, len(a.Val))
		for q, v := range a.Val {
			assert.Equal(t, math.Float64bits(v), math.Float64bits(got.Val[q]), "value %d bit for bit", q)
		}
		again, err := decAdjBlock(encAdjBlock(got))
		require.NoError(t, err)
		assert.Equal(t, got, again, "a decoded block is factored again when passed on")
		return got
	}
	plainSize := func(a AdjBlock) int {
		a.RowScale, a.ColScale = nil, nil
		return encodedSize(&a)
	}

	// Degrees 4, 1, 10 and 2, 1, 6 with a self-loop weight of 1; a
	// scale of 0 (an isolated node) is the degree −1.
	deg := block([]float64{degScale(4, 1), degScale(1, 1), degScale(10, 1)}, []float64{degScale(2, 1), 0, degScale(6, 1)}, 1)
	require.True(t, deg.factored())
	assert.Equal(t, plainSize(deg)-(1+8*len(deg.Val))+(1+8)+(1+3)+(1+3), encodedSize(&deg), "a byte a degree, the shift once, instead of the values")
	roundTrip(t, deg)

	odd := block([]float64{0.3, 1 / math.Sqrt(2), 0.7}, []float64{1 / math.Sqrt(3), 1 / math.Sqrt(2), 1 / math.Sqrt(7)}, 0)
	require.True(t, odd.factored())
	assert.Equal(t, plainSize(odd)-8*len(odd.Val)+8*(len(odd.Row)+int(odd.N))+1, encodedSize(&odd), "scales that are not of degrees travel as they are")
	roundTrip(t, odd)

	off := odd
	off.Val = slices.Clone(odd.Val)
	off.Val[4] = math.Nextafter(off.Val[4], 1)
	require.False(t, off.factored())
	assert.Equal(t, plainSize(off), encodedSize(&off), "a value off by one ulp: the values are sent")
	back, err := decAdjBlock(encAdjBlock(off))
	require.NoError(t, err)
	assert.Equal(t, off.Val, back.Val)

	head := func(n int32, code uint64) writer {
		w := writer{}
		w.varint(odd.Lo)
		w.varint(int64(n))
		ascending(&w, odd.Row)
		ascending(&w, odd.Ptr)
		w.i32s(odd.Col)
		w.uvarint(code)
		return w
	}
	w := head(2, adjFactored) // column 2 no longer fits
	w.f64s(odd.RowScale)
	w.f64s(odd.ColScale[:2])
	_, err = decAdjBlock(w.b)
	assert.ErrorContains(t, err, "column 2 in a block of 2")
	w = head(3, 7)
	_, err = decAdjBlock(w.b)
	assert.ErrorContains(t, err, "matrix values encoded as 7")
	w = head(3, adjDegrees)
	w.f64s([]float64{0})
	w.i32s([]int32{1, 2, -2})
	w.i32s([]int32{1, 2, 3})
	_, err = decAdjBlock(w.b)
	assert.ErrorContains(t, err, "node degree -2")
}
