package svgplot

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Issue 53 D4: on a crowded frontier (many λf values whose points lie
// close together) the labels kept with KeepLabels were drawn over each
// other where no place beside or around their point was free. No two
// texts overlap now, however crowded: a label goes, with a leader line,
// to the nearest free place in the axes, and only where none is left is
// it left out.
func TestCrowdedLabelsNeverOverlap(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{20, 40, 80} {
		p := Panel{Lines: []RefLine{{At: 80.5, Label: "majority class 80.50"}, {At: 80.52, Label: "rule: accuracy ≥ 80.52"}}}
		for s := 0; s < 2; s++ {
			se := Series{KeepLabels: true}
			for k := 0; k < n; k++ {
				se.X = append(se.X, 10+rng.Float64()*2)
				se.Y = append(se.Y, 80+rng.Float64())
				se.Labels = append(se.Labels, fmt.Sprintf("%g", float64(k)/4))
			}
			p.Series = append(p.Series, se)
		}
		svg := render(t, &Figure{Panels: []Panel{p}})
		_, _, _, texts := parseSVG(t, svg)
		labels := 0
		for k, tx := range texts {
			if tx.class == "pointlabel" {
				labels++
			}
			for _, o := range texts[k+1:] {
				assert.False(t, tx.box.overlaps(o.box), "%d points a series: %s %q %v overlaps %s %q %v", n, tx.class, tx.content, tx.box, o.class, o.content, o.box)
			}
		}
		if n <= 40 {
			assert.Equal(t, 2*n, labels, "every label kept at %d points a series", n)
		}
		assert.Positive(t, strings.Count(string(svg), `stroke="`+leaderColor+`"`), "leader lines")
	}
}
