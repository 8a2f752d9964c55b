package fmpbeam

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/testutil"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/minibatch"
)

// kindConfigs returns a float64 configuration of every kind the pipeline
// runs, with the variants whose pipelines differ.
func kindConfigs(in, classes int) map[string]layers.Config {
	mlp := layers.DefaultMLPConfig(in, classes)
	mlp.Hidden, mlp.Layers = 8, 3
	gcn := layers.DefaultGCNConfig(in, classes) // in < hidden: Ã·X first
	gcnNarrow := layers.DefaultGCNConfig(in, classes)
	gcnNarrow.Hidden, gcnNarrow.Activation, gcnNarrow.Propagation.Improved = 4, layers.ELU(1), true // in > hidden: X·W first
	sgc := layers.DefaultSGCConfig(in, classes)
	sgc.K = 2
	appnp := layers.DefaultAPPNPConfig(in, classes)
	appnp.Hidden, appnp.K = 8, 3
	gat := layers.DefaultGATConfig(in, classes)
	gat2 := gat
	gat2.Heads, gat2.Hidden, gat2.AddSelfLoops, gat2.NegativeSlope = 2, 3, false, 0.3
	jk := layers.DefaultJKNetConfig(in, classes)
	jk.Hidden = 8
	jkMax := jk
	jkMax.Mode, jkMax.Layers = layers.JKMax, 3
	sage := layers.DefaultSAGEConfig(in, classes) // in < hidden: the mean of X first
	sage.Hidden = 32
	sageNarrow := layers.DefaultSAGEConfig(in, classes) // in > hidden: X·W_l first
	sageNarrow.Hidden = 3
	sageMax := sage
	sageMax.Aggr, sageMax.Layers = "max", 3
	gin := layers.DefaultGINConfig(in, classes)
	gin.Hidden = 8
	return map[string]layers.Config{"mlp": mlp, "gcn": gcn, "gcn-narrow": gcnNarrow, "sgc": sgc, "appnp": appnp,
		"gat": gat, "gat-2x3": gat2, "jknet": jk, "jknet-max": jkMax,
		"sage": sage, "sage-narrow": sageNarrow, "sage-max": sageMax, "gin": gin}
}

// initModel builds a model of cfg on the data set with its seeded
// initial parameters, saves it, and returns the file's bytes and the
// parameters.
func initModel(t *testing.T, cfg layers.Config, ds *datasets.Dataset) ([]byte, []*tensor.Dense) {
	t.Helper()
	k, err := layers.KindOfConfig(cfg)
	require.NoError(t, err)
	m, err := k.Build(G.NewGraph(), ds.Graph, cfg, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Untrained: true})) // weights drawn, not trained: the pipeline checks arithmetic
	var params []*tensor.Dense
	for _, p := range m.Learnables() {
		params = append(params, p.Value().(*tensor.Dense))
	}
	return buf.Bytes(), params
}

// TestInferIsLayerwiseLogits: for every kind the pipeline's logits are
// minibatch.Logits's (each model's LayerwiseLogits) within 1e-9, float64,
// with blocks smaller than the graph so that every product crosses
// blocks.
func TestInferIsLayerwiseLogits(t *testing.T) {
	ds := smallData(t)
	dir, x := writeSmall(t, ds)
	lay := Layout{Size: 64}
	cfgs := kindConfigs(ds.NumFeatures, 2)
	want := map[string][]float64{}
	p, s := beam.NewPipelineWithRoot()
	nodes := ReadNodes(s, lay, dir+"/nodes-*.txt")
	st := NodeStats(s, lay, nodes)
	edges := ReadEdges(s, lay, dir+"/edges-*.txt")
	rows := ReadRows(s, lay, dir+"/features-*.txt", "features", nodes)
	adjs := map[Norm]beam.PCollection{}
	for name, cfg := range cfgs {
		file, params := initModel(t, cfg, ds)
		path := filepath.Join(dir, name+".fmp")
		require.NoError(t, os.WriteFile(path, file, 0o644))
		m, err := ReadModelFile(file)
		require.NoError(t, err)
		adj, err := minibatch.Matrix(cfg, ds.Graph)
		require.NoError(t, err)
		z, err := minibatch.Logits(cfg, params, adj, x)
		require.NoError(t, err)
		want[name] = testutil.ToF64(z)

		var a beam.PCollection
		if n, ok := m.Norm(); ok {
			if _, done := adjs[n]; !done {
				adjs[n], _ = BuildMatrix(s, lay, n, nodes, edges, st)
			}
			a = adjs[n]
		}
		zb, err := Infer(s, lay, m, ReadModel(s, path), a, rows)
		require.NoError(t, err)
		beam.ParDo0(s, &collectRowsFn{Key: "z" + name}, zb)
	}
	run(t, p)
	for name := range cfgs {
		got, c := rowsOf(t, "z"+name, ds.N())
		require.Equal(t, 2, c)
		testutil.AllClose(t, fmt.Sprintf("%s logits", name), got, want[name], 1e-9, 0)
	}
}
