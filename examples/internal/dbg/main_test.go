package dbg

import (
	"fmt"
	"testing"

	"github.com/fairmp/fairmp/examples/internal/exp"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/layers"
	"gorgonia.org/tensor"
)

func TestDbg(t *testing.T) {
	ds, err := datasets.Load("/work/shared/data", "nba", datasets.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	cnt := map[int]int{}
	for _, i := range ds.Split.Train {
		cnt[ds.Labels[i]]++
	}
	fmt.Println("train labels", cnt, "feat0", ds.Features[:10])
	p, _ := exp.NewProblem(ds, exp.DefaultSpec("mlp").Dtype)
	m, _ := exp.Build(p, exp.DefaultSpec("mlp"))
	tc := layers.DefaultTrainConfig()
	tc.LogEvery = 30
	tc.Log = testWriter{}
	tc.OnEpoch = func(layers.EpochStats) error {
		for _, q := range m.Learnables() {
			g, _ := q.Grad()
			g.(*tensor.Dense).Zero()
		}
		return nil
	}
	res, err := layers.Train(m, p.Task, tc)
	if err != nil {
		t.Fatal(err)
	}
	_ = res
}

type testWriter struct{}

func (testWriter) Write(b []byte) (int, error) { fmt.Print(string(b)); return len(b), nil }
