package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers/preprocess"
)

// preprocessed returns ds itself without a pre-processing -method, and
// otherwise a copy whose graph and features the method debiased (the
// labels, groups and split are ds's): the backbone then trains on them,
// and FMP and the thresholds post-process it on them. EDITS uses the
// training nodes' groups only (its authors' protocol), learns in -dtype
// and is seeded by -seed. Unless -quiet, it prints EDITS' attribute and
// structural bias before and after, over every node of the two groups,
// and what changed; the summary (what changed, the biases before and
// after, over every node of the two groups) goes to metrics.json.
func preprocessed(o *options, ds *datasets.Dataset, stderr io.Writer) (*datasets.Dataset, map[string]any, error) {
	if o.pre == nil {
		return ds, nil, nil
	}
	m := o.pre
	if e, ok := m.(preprocess.EDITSConfig); ok {
		e.Dtype = o.model.Dtype
		m = e
	}
	sens := make([]int, ds.N())
	for i := range sens {
		sens[i] = -1
	}
	for _, i := range ds.Split.Train {
		sens[i] = ds.Sens[i]
	}
	begin := time.Now()
	out, err := m.Debias(o.ctx, ds.Graph, ds.Features, ds.NumFeatures, sens)
	if err != nil {
		return nil, nil, badInput("-method %s: %v (EDITS compares two groups: a -sens column with two values, each with training nodes)", m.Name(), err)
	}
	took := time.Since(begin)
	var masked []string
	for _, j := range out.Masked {
		name := fmt.Sprint(j)
		if j < len(ds.FeatureNames) {
			name = ds.FeatureNames[j]
		}
		masked = append(masked, name)
	}
	summary := map[string]any{"method": m.Name(), "edges_removed": out.Removed, "edges_added": out.Added, "edges_before": ds.Graph.NumEdges(),
		"columns_zeroed": nonNil(masked), "seconds": took.Seconds()}
	cfg := preprocess.DefaultBiasConfig()
	before, err1 := preprocess.Bias(ds.Graph, ds.Features, ds.NumFeatures, ds.Sens, cfg)
	after, err2 := preprocess.Bias(out.Graph, out.Features, ds.NumFeatures, ds.Sens, cfg)
	if err1 == nil && err2 == nil {
		summary["attribute_bias"] = [2]float64{before.Attribute, after.Attribute}
		summary["structural_bias"] = [2]float64{before.Structural, after.Structural}
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "%s: %d edges removed and %d added (of %d), feature columns zeroed: %s (%v)\n",
			m.Name(), out.Removed, out.Added, ds.Graph.NumEdges(), strings.Join(masked, ", "), took.Round(time.Millisecond))
		if err1 == nil && err2 == nil {
			fmt.Fprintf(stderr, "%s: attribute bias %.3f → %.3f, structural bias %.3f → %.3f (×10⁻³, mean 1-Wasserstein distance between the groups per column)\n",
				m.Name(), 1e3*before.Attribute, 1e3*after.Attribute, 1e3*before.Structural, 1e3*after.Structural)
		}
	}
	cp := *ds
	cp.Graph, cp.Features = out.Graph, out.Features
	return &cp, summary, nil
}
