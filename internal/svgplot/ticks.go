package svgplot

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// axis is one axis of a panel: its range, its scale and its ticks inside
// it.
type axis struct {
	lo, hi float64
	log    bool
	ticks  []float64
	labels []string // the ticks' labels, plain text
	runs   [][]run  // the same, parsed (custom ticks are markup)
}

// niceStep returns the step of 1, 2 or 5 times a power of ten nearest to
// span/intervals.
func niceStep(span float64, intervals int) float64 {
	raw := span / float64(intervals)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f < 1.5:
		return mag
	case f < 3.5:
		return 2 * mag
	case f < 7.5:
		return 5 * mag
	}
	return 10 * mag
}

// niceTicks returns the ticks of about the given number of intervals
// that cover [lo, hi] (the first at or below lo, the last at or above
// hi), and the decimals that print all of them alike.
func niceTicks(lo, hi float64, intervals int) ([]float64, int) {
	step := niceStep(hi-lo, intervals)
	dec := 0
	if d := -int(math.Floor(math.Log10(step) + 1e-9)); d > 0 {
		dec = d
	}
	// k/inv is the nearest float to the tick when the step is a fraction
	// (k*0.02 is not: 41*0.02 = 0.8200000000000001).
	at := func(k float64) float64 { return k * step }
	if step < 1 {
		inv := math.Round(1 / step)
		at = func(k float64) float64 { return k / inv }
	}
	k0, k1 := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	if !(k1 >= k0 && k1-k0 <= 1000) { // NaN or a range too narrow for its magnitude
		return nil, dec
	}
	var ts []float64
	for k := 0.0; k <= k1-k0; k++ {
		ts = append(ts, at(k0+k))
	}
	return ts, dec
}

// formatTick prints v with dec decimals and a typographic minus.
func formatTick(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		if strings.Trim(rest, "0.") == "" {
			return rest
		}
		return "−" + rest
	}
	return s
}

// makeAxis returns the axis over [lo, hi] drawn over length pixels, with
// the most ticks (up to 5 intervals) whose labels, at font size size, do
// not crowd each other: side by side for a horizontal axis, stacked for a
// vertical one.
func makeAxis(lo, hi, length, size float64, horizontal bool) axis {
	var a axis
	for intervals := 5; intervals >= 1; intervals-- {
		ts, dec := niceTicks(lo, hi, intervals)
		a = axis{lo: lo, hi: hi}
		eps := (hi - lo) * 1e-9
		widest := 0.0
		for _, t := range ts {
			if t < lo-eps || t > hi+eps {
				continue
			}
			l := formatTick(t, dec)
			a.ticks, a.labels = append(a.ticks, t), append(a.labels, l)
			widest = math.Max(widest, textWidth([]run{{text: l}}, size))
		}
		need := 2 * size
		if horizontal {
			need = widest + size
		}
		if len(a.ticks) < 2 || length*(ts[1]-ts[0])/(hi-lo) >= need {
			return a.withRuns()
		}
	}
	return a.withRuns()
}

// withRuns sets the runs of a's plain labels.
func (a axis) withRuns() axis {
	a.runs = make([][]run, len(a.labels))
	for k, l := range a.labels {
		a.runs[k] = []run{{text: l}}
	}
	return a
}

// decimal returns m × 10^e as the float nearest to it (m*math.Pow(10, e)
// is not always: 3*0.1 = 0.30000000000000004).
func decimal(m, e int) float64 {
	v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(e), 64)
	return v
}

// makeLogAxis returns the log axis over [lo, hi] (0 < lo < hi) drawn over
// length pixels: ticks at the powers of ten inside it, at 1, 2 and 5
// times them when fewer than three powers are, at every digit times them
// when that gives fewer than two, or the linear axis's ticks as a last
// resort; the most of them whose labels do not crowd each other (every
// second or third power of ten on a long axis). Labels are the numbers as
// short as they print ("0.01", "20", "1000").
func makeLogAxis(lo, hi, length, size float64, horizontal bool) axis {
	l0, l1 := math.Log10(lo), math.Log10(hi)
	eps := (l1 - l0) * 1e-9
	inside := func(mults []int) []float64 {
		var ts []float64
		for e := int(math.Floor(l0)); e <= int(math.Ceil(l1)); e++ {
			for _, m := range mults {
				v := decimal(m, e)
				if l := math.Log10(v); l >= l0-eps && l <= l1+eps {
					ts = append(ts, v)
				}
			}
		}
		return ts
	}
	ts := inside([]int{1})
	if len(ts) < 3 {
		ts = inside([]int{1, 2, 5})
	}
	if len(ts) < 2 {
		ts = inside([]int{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	a := axis{lo: lo, hi: hi, log: true}
	if len(ts) < 2 {
		lin := makeAxis(lo, hi, length, size, horizontal)
		a.ticks, a.labels = lin.ticks, lin.labels
		return a.withRuns()
	}
	for step := 1; step <= len(ts); step++ {
		a.ticks, a.labels = nil, nil
		for k := 0; k < len(ts); k += step {
			a.ticks, a.labels = append(a.ticks, ts[k]), append(a.labels, strconv.FormatFloat(ts[k], 'f', -1, 64))
		}
		if !crowded(a, length, size, horizontal) {
			break
		}
	}
	return a.withRuns()
}

// crowded reports whether two neighbouring tick labels of a come closer
// than a font size to each other: side by side for a horizontal axis,
// stacked for a vertical one.
func crowded(a axis, length, size float64, horizontal bool) bool {
	for k := 1; k < len(a.ticks); k++ {
		gap := a.pos(a.ticks[k], length) - a.pos(a.ticks[k-1], length)
		need := 2 * size
		if horizontal {
			need = (textWidth([]run{{text: a.labels[k-1]}}, size)+textWidth([]run{{text: a.labels[k]}}, size))/2 + size
		}
		if gap < need {
			return true
		}
	}
	return false
}

// makeCustomAxis returns the axis over [lo, hi] with the given ticks
// (those inside it), or an error naming the first two neighbours whose
// labels would touch: side by side for a horizontal axis, closer than a
// line for a vertical one.
func makeCustomAxis(lo, hi float64, log bool, ticks []Tick, runs [][]run, length, size float64, horizontal bool) (axis, error) {
	a := axis{lo: lo, hi: hi, log: log}
	order := make([]int, len(ticks))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(i, j int) bool { return ticks[order[i]].At < ticks[order[j]].At })
	eps := (hi - lo) * 1e-9
	for _, k := range order {
		t := ticks[k]
		if t.At < lo-eps || t.At > hi+eps {
			continue
		}
		a.ticks, a.runs = append(a.ticks, t.At), append(a.runs, runs[k])
		var b strings.Builder
		for _, r := range runs[k] {
			b.WriteString(r.text)
		}
		a.labels = append(a.labels, b.String())
	}
	for k := 1; k < len(a.ticks); k++ {
		gap := a.pos(a.ticks[k], length) - a.pos(a.ticks[k-1], length)
		need := 1.2 * size
		if horizontal {
			need = (textWidth(a.runs[k-1], size)+textWidth(a.runs[k], size))/2 + 0.5*size
		}
		if gap < need {
			return a, fmt.Errorf("tick labels %q and %q are too close to fit side by side (widen the axes or shorten them)", a.labels[k-1], a.labels[k])
		}
	}
	return a, nil
}

// pos maps v to a pixel offset along length (from lo at 0).
func (a axis) pos(v, length float64) float64 {
	if a.log {
		return (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo)) * length
	}
	return (v - a.lo) / (a.hi - a.lo) * length
}

// autoRange returns the range of an axis over the values vs: their
// extent plus 5% each side, so that no marker sits on the frame, or one
// unit (or 10% of the value) wide around a single value. The margin is
// less than a tick step: data at or above zero get no negative tick.
func autoRange(vs []float64) (float64, float64) {
	lo, hi := vs[0], vs[0]
	for _, v := range vs[1:] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	d := 0.05 * (hi - lo)
	if lo == hi {
		d = math.Max(0.1*math.Abs(lo), 1) / 2
	}
	return lo - d, hi + d
}

// autoLogRange is autoRange in the logarithms of vs (all positive): a 5%
// margin each side in log space, or a factor of √10 around a single value.
func autoLogRange(vs []float64) (float64, float64) {
	ls := make([]float64, len(vs))
	for k, v := range vs {
		ls[k] = math.Log10(v)
	}
	lo, hi := ls[0], ls[0]
	for _, v := range ls[1:] {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	d := 0.05 * (hi - lo)
	if lo == hi {
		d = 0.5
	}
	return math.Pow(10, lo-d), math.Pow(10, hi+d)
}
