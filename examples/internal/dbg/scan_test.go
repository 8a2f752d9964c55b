package dbg

import (
	"fmt"
	"testing"

	"github.com/fairmp/fairmp/examples/internal/exp"
	"github.com/fairmp/fairmp/fmp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/metrics"
)

func TestScan(t *testing.T) {
	ds, _ := datasets.Synthetic(datasets.DefaultSyntheticConfig())
	type c struct {
		ls, lf float64
		mode   fmp.TrainMode
	}
	for _, cc := range []c{{1, 0, fmp.EndToEnd}, {1, 1, fmp.EndToEnd}, {1, 3, fmp.EndToEnd}, {1, 10, fmp.EndToEnd}, {1, 3, fmp.InferenceOnly}, {1, 3, fmp.ConstantDual}, {3, 3, fmp.EndToEnd}, {1, 30, fmp.EndToEnd}} {
		s := exp.DefaultSpec("fmp")
		s.FMP.LambdaS, s.FMP.LambdaF, s.FMP.TrainMode = cc.ls, cc.lf, cc.mode
		p, _ := exp.NewProblem(ds, s.Dtype)
		o, err := exp.Run(p, s, exp.DefaultTrainOptions())
		if err != nil {
			t.Fatal(err)
		}
		r := o.Report
		fmt.Printf("ls %g lf %g %v: acc %.2f dp %.2f eo %.2f\n", cc.ls, cc.lf, cc.mode, metrics.Percent(r.Accuracy), metrics.Percent(r.DemographicParity), metrics.Percent(r.EqualOpportunity))
	}
}
