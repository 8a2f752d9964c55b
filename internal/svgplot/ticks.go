package svgplot

import (
	"math"
	"strconv"
	"strings"
)

// axis is one axis of a panel: its range and its ticks inside it.
type axis struct {
	lo, hi float64
	ticks  []float64
	labels []string
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
			return a
		}
	}
	return a
}

// pos maps v to a pixel offset along length (from lo at 0).
func (a axis) pos(v, length float64) float64 {
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
