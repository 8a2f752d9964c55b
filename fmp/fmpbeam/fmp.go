package fmpbeam

import (
	"context"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/fairmp/fairmp/fmp"
)

// FMP's K steps, for S settings side by side (the frontier's grid in one
// pipeline): every node holds its X_trans row and, per setting, its F and
// X_agg rows (a State per block). Step k of every setting is
//
//   - the sparse product ÃF (Propagate, on S·C columns);
//   - per node (fmp.Steps): X_agg, the gradient step on the dual u_k, and
//     the node's softmax added to its group's sum;
//   - the global sum of the groups' G × C sums (a Combine, in fixed point:
//     exact, whatever order Beam adds in), and from it u_{k+1} (a
//     singleton, the next step's side input);
//   - per node, F = X_agg − γ∇(F, u_{k+1}).
//
// A setting with fewer steps than the largest K keeps its F after its
// last step.

// fixedOne is 2⁵², the fixed-point scale of the groups' sums: a
// probability p ∈ [0, 1] adds round(p·2⁵²) to a 128-bit integer, so the
// sums are exact and associative (their order cannot change a bit) and
// lose less than 2⁻⁵³ per node against float64 sums.
const fixedOne = 1 << 52

// initStateFn starts a block's FMP state: F = X_trans for every setting.
type initStateFn struct{ S int }

func (f *initStateFn) ProcessElement(ctx context.Context, b int64, nodes func(*Nodes) bool, logits func(*Rows) bool, emit func(int64, State)) error {
	var nb Nodes
	var z Rows
	if !nodes(&nb) || !logits(&z) {
		return fmt.Errorf("fmpbeam: FMP: block %d has no nodes or no logits (they come from different graphs)", b)
	}
	if nb.N != z.N {
		return fmt.Errorf("fmpbeam: FMP: block %d has %d nodes and %d rows of logits", b, nb.N, z.N)
	}
	if z.C < 2 {
		return fmt.Errorf("fmpbeam: FMP: logits of %d columns, want at least 2 (class logits)", z.C)
	}
	counter(ctx, "fmp.init", keyed(b, encodedSize(&nb))+keyed(b, encodedSize(&z)))
	n, c := int(z.N), int(z.C)
	x := State{Lo: nb.Lo, N: z.N, C: z.C, S: int32(f.S), Group: nb.Sens, X: z.V, F: make([]float64, n*f.S*c), Agg: make([]float64, n*f.S*c)}
	for i := 0; i < n; i++ {
		for s := 0; s < f.S; s++ {
			copy(x.F[(i*f.S+s)*c:], z.V[i*c:(i+1)*c])
		}
	}
	emit(b, x)
	return nil
}

// stateRowsFn gives a block's F of every setting (S·C columns).
func stateRowsFn(b int64, x State) (int64, Rows) {
	return b, Rows{Lo: x.Lo, N: x.N, C: x.S * x.C, V: x.F}
}

// stepper holds a DoFn's per-setting fmp.Steps, built on first use from
// the groups' sizes.
type stepper struct {
	steps []*fmp.Steps
}

func (p *stepper) get(settings []fmp.Config, st Stats) ([]*fmp.Steps, error) {
	if p.steps != nil {
		return p.steps, nil
	}
	counts := make([]int, len(st.Groups))
	for g, c := range st.Groups {
		counts[g] = int(c)
	}
	steps := make([]*fmp.Steps, len(settings))
	for s, c := range settings {
		var err error
		if steps[s], err = fmp.NewSteps(c, counts); err != nil {
			return nil, fmt.Errorf("fmpbeam: FMP: %w", err)
		}
	}
	p.steps = steps
	return steps, nil
}

// dualOf returns setting s's dual (R × c for the setting's R) from a
// Dual (zero when it is empty: the first step's).
func dualOf(u Dual, s int, stp *fmp.Steps, c int) []float64 {
	if len(u.U) == 0 {
		return make([]float64, stp.Rows()*c)
	}
	lo := s * int(u.R) * c
	return u.U[lo : lo+stp.Rows()*c]
}

// stepAFn is the first half of step K: X_agg and the gradient step on the
// current dual, and the block's part of the groups' sums.
type stepAFn struct {
	K        int
	Settings []fmp.Config
	Name     string
	p        stepper
}

func (f *stepAFn) ProcessElement(ctx context.Context, b int64, states func(*State) bool, afs func(*Rows) bool, uIt func(*Dual) bool, stIt func(*Stats) bool, emit func(int64, State), emitSums func(Sums)) error {
	u, ok := side(uIt)
	st, ok2 := side(stIt)
	if !ok || !ok2 {
		return nil // an earlier stage failed (see side)
	}
	steps, err := f.p.get(f.Settings, st)
	if err != nil {
		return err
	}
	var x State
	var af Rows
	if !states(&x) || !afs(&af) {
		return fmt.Errorf("fmpbeam: FMP: block %d lacks its state or its product", b)
	}
	counter(ctx, f.Name+".state", keyed(b, encodedSize(&x))+keyed(b, encodedSize(&af)))
	n, c, S, G := int(x.N), int(x.C), int(x.S), len(st.Groups)
	sums := Sums{S: int32(S), G: int32(G), C: int32(c), Hi: make([]uint64, S*G*c), Lo: make([]uint64, S*G*c)}
	fbar := make([]float64, c)
	p := make([]float64, c)
	for s, stp := range steps {
		if f.K >= f.Settings[s].K {
			continue
		}
		us := dualOf(u, s, stp, c)
		for i := 0; i < n; i++ {
			r := (i*S + s) * c
			agg, fi := x.Agg[r:r+c], x.F[r:r+c]
			stp.Aggregate(agg, x.X[i*c:(i+1)*c], af.V[r:r+c])
			stp.Descend(fbar, agg, fi, int(x.Group[i]), us)
			if g := int(x.Group[i]); g >= 0 {
				stp.Probs(p, fbar)
				for j, v := range p {
					k := (s*G+g)*c + j
					var carry uint64
					sums.Lo[k], carry = bits.Add64(sums.Lo[k], uint64(math.Round(v*fixedOne)), 0)
					sums.Hi[k] += carry
				}
			}
		}
	}
	emit(b, x)
	emitSums(sums)
	return nil
}

// sumsFn adds the blocks' sums (a global combine); integer additions, so
// the total does not depend on the order.
type sumsFn struct{}

func (sumsFn) CreateAccumulator() Sums { return Sums{} }

func (sumsFn) AddInput(a, x Sums) Sums { return addSums(a, x) }

func (sumsFn) MergeAccumulators(a, x Sums) Sums { return addSums(a, x) }

func (sumsFn) ExtractOutput(a Sums) Sums { return a }

func addSums(a, x Sums) Sums {
	if len(a.Hi) == 0 {
		return Sums{S: x.S, G: x.G, C: x.C, Hi: append([]uint64(nil), x.Hi...), Lo: append([]uint64(nil), x.Lo...)}
	}
	for k := range x.Lo {
		var carry uint64
		a.Lo[k], carry = bits.Add64(a.Lo[k], x.Lo[k], 0)
		a.Hi[k] += x.Hi[k] + carry
	}
	return a
}

// dualFn computes every setting's u_{K+1} from the groups' sums and u_K.
type dualFn struct {
	K        int
	Settings []fmp.Config
	p        stepper
}

func (f *dualFn) ProcessElement(sums Sums, uIt func(*Dual) bool, stIt func(*Stats) bool, emit func(Dual)) error {
	u, ok := side(uIt)
	st, ok2 := side(stIt)
	if !ok || !ok2 {
		return nil // an earlier stage failed (see side)
	}
	steps, err := f.p.get(f.Settings, st)
	if err != nil {
		return err
	}
	S, G, c := len(steps), len(st.Groups), int(sums.C)
	if len(sums.Hi) == 0 {
		emit(u) // no node: nothing moves
		return nil
	}
	rows := 0
	next := Dual{S: int32(S), C: int32(c), Rows: make([]int32, S)}
	for s, stp := range steps {
		rows = max(rows, stp.Rows())
		next.Rows[s] = int32(stp.Rows())
	}
	next.R, next.U = int32(rows), make([]float64, S*rows*c)
	for s, stp := range steps {
		us := append([]float64(nil), dualOf(u, s, stp, c)...)
		if f.K < f.Settings[s].K {
			total := make([]float64, G*c)
			for k := range total {
				j := s*G*c + k
				total[k] = (float64(sums.Hi[j])*0x1p64 + float64(sums.Lo[j])) / fixedOne
			}
			stp.Dual(us, total)
		}
		copy(next.U[s*rows*c:], us) // the first Rows[s] rows of its slot
	}
	emit(next)
	return nil
}

// stepBFn is the second half of step K: F = X_agg − γ∇(F, u_{K+1}).
type stepBFn struct {
	K        int
	Settings []fmp.Config
	p        stepper
}

func (f *stepBFn) ProcessElement(b int64, x State, uIt func(*Dual) bool, stIt func(*Stats) bool, emit func(int64, State)) error {
	u, ok := side(uIt)
	st, ok2 := side(stIt)
	if !ok || !ok2 {
		return nil // an earlier stage failed (see side)
	}
	steps, err := f.p.get(f.Settings, st)
	if err != nil {
		return err
	}
	n, c, S := int(x.N), int(x.C), int(x.S)
	for s, stp := range steps {
		if f.K >= f.Settings[s].K {
			continue
		}
		us := dualOf(u, s, stp, c)
		for i := 0; i < n; i++ {
			r := (i*S + s) * c
			agg := x.Agg[r : r+c]
			stp.Descend(agg, agg, x.F[r:r+c], int(x.Group[i]), us)
			copy(x.F[r:r+c], agg)
		}
	}
	emit(b, x)
	return nil
}

// FMP runs FMP's steps for the settings side by side on the logits z
// (KV<int64, Rows>, C ≥ 2 columns) over the propagation matrix adj
// (BuildMatrix with the normalisation FMP assumes: fmp.New's), for the
// nodes' groups (ReadNodes; stats is NodeStats's output, whose group
// sizes give Δs). It returns every setting's F^K side by side
// (KV<int64, Rows>, S·C columns: setting s in columns s·C to (s+1)·C−1)
// and the settings' final duals (a singleton Dual). The settings must be
// valid (fmp.Config.Validate). Step k's byte counters are named
// "fmp.kNN" (its Propagate) and "fmp.kNN.state".
func FMP(s beam.Scope, lay Layout, settings []fmp.Config, adj, nodes, z, stats beam.PCollection) (out, duals beam.PCollection) {
	s = s.Scope("FMP")
	st := beam.SideInput{Input: stats}
	state := beam.ParDo(s, &initStateFn{S: len(settings)}, beam.CoGroupByKey(s, nodes, z))
	u := beam.Create(s, Dual{})
	steps := 0
	for _, c := range settings {
		steps = max(steps, c.K)
	}
	for k := 0; k < steps; k++ {
		name := fmt.Sprintf("fmp.k%02d", k)
		var af beam.PCollection
		af, adj = PropagateChain(s, lay, name, adj, beam.ParDo(s, stateRowsFn, state))
		var parts beam.PCollection
		state, parts = beam.ParDo2(s, &stepAFn{K: k, Settings: settings, Name: name}, beam.CoGroupByKey(s, state, af), beam.SideInput{Input: u}, st)
		u = beam.ParDo(s, &dualFn{K: k, Settings: settings}, beam.Combine(s, &sumsFn{}, parts), beam.SideInput{Input: u}, st)
		state = beam.ParDo(s, &stepBFn{K: k, Settings: settings}, state, beam.SideInput{Input: u}, st)
	}
	return beam.ParDo(s, stateRowsFn, state), u
}

func init() {
	register.DoFn5x1[context.Context, int64, func(*Nodes) bool, func(*Rows) bool, func(int64, State), error](&initStateFn{})
	register.Function2x2(stateRowsFn)
	register.DoFn8x1[context.Context, int64, func(*State) bool, func(*Rows) bool, func(*Dual) bool, func(*Stats) bool, func(int64, State), func(Sums), error](&stepAFn{})
	register.Combiner3[Sums, Sums, Sums](&sumsFn{})
	register.DoFn4x1[Sums, func(*Dual) bool, func(*Stats) bool, func(Dual), error](&dualFn{})
	register.DoFn5x1[int64, State, func(*Dual) bool, func(*Stats) bool, func(int64, State), error](&stepBFn{})
	register.Emitter1[Dual]()
	register.Iter1[Dual]()
	register.Emitter2[int64, State]()
	register.Emitter1[Sums]()
	register.Iter1[State]()
}
