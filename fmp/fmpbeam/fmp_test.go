package fmpbeam

import (
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/testutil"
)

// fmpSettings are settings whose pipelines differ: both scalings, λs 0
// (no propagation) and > 0, λf 0, binding and not, K 1 to 10, τ, and the
// per-group rows.
func fmpSettings() []fmp.Config {
	d := fmp.DefaultConfig()
	paper := d
	paper.Scaling, paper.LambdaF, paper.K, paper.Temperature = fmp.Paper, 0.05, 3, 1
	noProp := d
	noProp.LambdaS, noProp.K = 0, 4
	zero := d
	zero.LambdaF = 0
	strong := d
	strong.LambdaF, strong.K, strong.Temperature, strong.Rho = 16, 7, 0.3, 2.5
	rows := d
	rows.PerGroupRows, rows.K, rows.LambdaS = true, 2, 0.5
	return []fmp.Config{d, paper, noProp, zero, strong, rows}
}

// TestFMPIsApply: the pipeline's F^K of several settings side by side is
// fmp.Layer.Apply's on the same logits within 1e-9, for a binary
// attribute with unknown members and for three groups.
func TestFMPIsApply(t *testing.T) {
	ds := smallData(t)
	three := make([]int, ds.N())
	for i := range three {
		three[i] = i%3 - boolToInt(i%17 == 0) // some unknown
		if three[i] < 0 {
			three[i] = -1
		}
	}
	binary := append([]int(nil), ds.Sens...)
	for i := 0; i < len(binary); i += 11 {
		binary[i] = -1
	}
	for name, sens := range map[string][]int{"binary": binary, "three groups": three} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, WriteGraph(dir, 3, ds.Graph))
			require.NoError(t, WriteNodes(dir, 2, ds.Labels, sens, ds.Split))
			c := 3
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
			out, _ := FMP(s, lay, settings, adj, nodes, logits, st)
			beam.ParDo0(s, &collectRowsFn{Key: "fmp" + name}, out)
			run(t, p)

			got, width := rowsOf(t, "fmp"+name, ds.N())
			require.Equal(t, len(settings)*c, width)
			a := graph.NormalizedAdjacency(ds.Graph)
			for k, cfg := range settings {
				l, err := fmp.New(a, sens, cfg)
				require.NoError(t, err)
				want, err := l.Apply(tensor.New(tensor.WithShape(ds.N(), c), tensor.WithBacking(append([]float64(nil), z...))))
				require.NoError(t, err)
				col := make([]float64, ds.N()*c)
				for i := 0; i < ds.N(); i++ {
					copy(col[i*c:], got[i*width+k*c:i*width+(k+1)*c])
				}
				testutil.AllClose(t, fmt.Sprintf("setting %d %+v", k, cfg), col, testutil.ToF64(want), 1e-9, 0)
			}
		})
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
