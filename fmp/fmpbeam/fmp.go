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
	x := State{Lo: nb.Lo, N: z.N, C: z.C, S: int32(f.S), Group: nb.Sens, X: z.V, F: make([]float64, n*f.S*c)}
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

// The product of a step carries fewer columns than the S·C of F. A
// setting that no longer steps (its K reached) or does not propagate
// (λs = 0: X_agg = X_trans) sends nothing. The others are grouped by
// their γ = 1/(1+λs): in a group, every node's class sum Σ_j F_ij is the
// same for every setting, whatever its λf, τ, scaling or dual, because
// the fairness gradient's row sums to zero (∂/∂F of u·softmax(F/τ) is
// p ⊙ (a − p·a), and Σ_j p_j = 1), so the class sums follow the same
// linear recursion σ' = γ·σ_X + (1−γ)·Ãσ from the same start σ_X. A
// group therefore sends one shared column, the class sums of its first
// setting, and each of its settings its first C−1 columns; the last
// column of a setting's product is Ãσ minus the others. The only
// difference from Ã·F column by column is rounding: the settings' class
// sums agree to the last bits of the fairness step, and so does the
// rebuilt column (the tests hold it to Layer.Apply within 1e-9). With
// the default frontier (20 settings, one λs, C = 2) the product is 21
// columns instead of 40.

// wire is one step's columns of the product (see above).
type wire struct {
	Width int
	// Sigma is setting s's group's shared column (−1: s sends nothing
	// this step), First the first of its own C−1 columns; Source marks the
	// setting whose class sums are the group's shared column.
	Sigma, First []int
	Source       []bool
}

// wireOf lays out step k's columns for the settings, of c classes each.
func wireOf(k int, settings []fmp.Config, c int) wire {
	w := wire{Sigma: make([]int, len(settings)), First: make([]int, len(settings)), Source: make([]bool, len(settings))}
	group := map[float64]int{} // γ → its shared column
	for s, cfg := range settings {
		w.Sigma[s], w.First[s] = -1, -1
		if k >= cfg.K || cfg.Gamma() == 1 {
			continue
		}
		col, ok := group[cfg.Gamma()]
		if !ok {
			col = w.Width
			group[cfg.Gamma()] = col
			w.Source[s] = true
			w.Width++
		}
		w.Sigma[s], w.First[s] = col, w.Width
		w.Width += c - 1
	}
	return w
}

// packFn gives a block's columns of step K's product (see wire).
type packFn struct {
	K        int
	Settings []fmp.Config
}

func (f *packFn) ProcessElement(b int64, x State) (int64, Rows) {
	n, c, S := int(x.N), int(x.C), int(x.S)
	w := wireOf(f.K, f.Settings, c)
	v := make([]float64, n*w.Width)
	for i := 0; i < n; i++ {
		out := v[i*w.Width : (i+1)*w.Width]
		for s := range f.Settings {
			if w.Sigma[s] < 0 {
				continue
			}
			fi := x.F[(i*S+s)*c : (i*S+s+1)*c]
			if w.Source[s] {
				sum := 0.0
				for _, y := range fi {
					sum += y
				}
				out[w.Sigma[s]] = sum
			}
			copy(out[w.First[s]:w.First[s]+c-1], fi)
		}
	}
	return b, Rows{Lo: x.Lo, N: x.N, C: int32(w.Width), V: v}
}

// unpack writes setting s's row of ÃF for node i into af from the
// product's row p (see wire).
func (w *wire) unpack(af, p []float64, s int) {
	c := len(af)
	copy(af[:c-1], p[w.First[s]:w.First[s]+c-1])
	last := p[w.Sigma[s]]
	for _, y := range af[:c-1] {
		last -= y
	}
	af[c-1] = last
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
	Size     int64
	p        stepper
}

func (f *stepAFn) ProcessElement(ctx context.Context, b int64, states func(*State) bool, parts func(*Partial) bool, uIt func(*Dual) bool, stIt func(*Stats) bool, emit func(int64, State), emitSums func(Sums)) error {
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
	if !states(&x) {
		return fmt.Errorf("fmpbeam: FMP: block %d lacks its state (the matrix and the logits come from different graphs)", b)
	}
	counter(ctx, f.Name+".state", keyed(b, encodedSize(&x)))
	prod, bytes, err := sumPartials(b, f.Size, f.Name, parts)
	counter(ctx, f.Name+".sum", bytes)
	if err != nil {
		return err
	}
	n, c, S, G := int(x.N), int(x.C), int(x.S), len(st.Groups)
	w := wireOf(f.K, f.Settings, c)
	if int(prod.N) != n || int(prod.C) != w.Width {
		return fmt.Errorf("fmpbeam: FMP: block %d has %d nodes and a product of %d rows × %d columns, want %d", b, n, prod.N, prod.C, w.Width)
	}
	x.Agg = make([]float64, n*S*c) // X_agg, for stepBFn; not carried past it
	sums := Sums{S: int32(S), G: int32(G), C: int32(c), Hi: make([]uint64, S*G*c), Lo: make([]uint64, S*G*c)}
	fbar := make([]float64, c)
	p := make([]float64, c)
	af := make([]float64, c)
	for s, stp := range steps {
		if f.K >= f.Settings[s].K {
			continue
		}
		us := dualOf(u, s, stp, c)
		for i := 0; i < n; i++ {
			r := (i*S + s) * c
			agg, fi, xi := x.Agg[r:r+c], x.F[r:r+c], x.X[i*c:(i+1)*c]
			if w.Sigma[s] >= 0 {
				w.unpack(af, prod.V[i*w.Width:(i+1)*w.Width], s)
				stp.Aggregate(agg, xi, af)
			} else {
				stp.Aggregate(agg, xi, nil) // λs = 0: X_agg = X_trans
			}
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
	x.Agg = nil
	emit(b, x)
	return nil
}

// FMPOptions are the options of FMPWith.
type FMPOptions struct {
	// Float32Products sends each step's partial products rounded to
	// float32 (4 bytes a value instead of 8): for a float32 model, whose
	// logits carry float32 precision already. Everything else (the state,
	// the sums, the duals) stays float64. The result then differs from
	// Layer.Apply's float64 one by float32 rounding, bounded in the tests
	// (TestFMPFloat32Products: 1e-5 relative to the logits' scale).
	Float32Products bool
}

// DefaultFMPOptions returns float64 products: Layer.Apply's numbers
// within 1e-9.
func DefaultFMPOptions() FMPOptions { return FMPOptions{} }

// FMP runs FMP's steps for the settings side by side on the logits z
// (KV<int64, Rows>, C ≥ 2 columns) over the propagation matrix adj
// (BuildMatrix with the normalisation FMP assumes: fmp.New's), for the
// nodes' groups (ReadNodes; stats is NodeStats's output, whose group
// sizes give Δs). It returns every setting's F^K side by side
// (KV<int64, Rows>, S·C columns: setting s in columns s·C to (s+1)·C−1)
// and the settings' final duals (a singleton Dual). The settings must be
// valid (fmp.Config.Validate). Step k's byte counters are
// "fmp.kNN.join" (the matrix joined with the columns of the product, see
// wire), "fmp.kNN.sum" (the partial products) and "fmp.kNN.state" (the
// nodes' state, grouped with the partial products: one shuffle for a
// step's sum and its state). It is FMPWith's default options.
func FMP(s beam.Scope, lay Layout, settings []fmp.Config, adj, nodes, z, stats beam.PCollection) (out, duals beam.PCollection) {
	return FMPWith(s, lay, DefaultFMPOptions(), settings, adj, nodes, z, stats)
}

// FMPWith is FMP with options.
func FMPWith(s beam.Scope, lay Layout, o FMPOptions, settings []fmp.Config, adj, nodes, z, stats beam.PCollection) (out, duals beam.PCollection) {
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
		var parts beam.PCollection
		parts, adj = spread(s.Scope("Propagate "+name), lay, name, adj, beam.ParDo(s, &packFn{K: k, Settings: settings}, state), o.Float32Products)
		var sums beam.PCollection
		state, sums = beam.ParDo2(s, &stepAFn{K: k, Settings: settings, Name: name, Size: lay.Size}, beam.CoGroupByKey(s, state, parts), beam.SideInput{Input: u}, st)
		u = beam.ParDo(s, &dualFn{K: k, Settings: settings}, beam.Combine(s, &sumsFn{}, sums), beam.SideInput{Input: u}, st)
		state = beam.ParDo(s, &stepBFn{K: k, Settings: settings}, state, beam.SideInput{Input: u}, st)
	}
	return beam.ParDo(s, stateRowsFn, state), u
}

func init() {
	register.DoFn5x1[context.Context, int64, func(*Nodes) bool, func(*Rows) bool, func(int64, State), error](&initStateFn{})
	register.Function2x2(stateRowsFn)
	register.DoFn2x2[int64, State, int64, Rows](&packFn{})
	register.DoFn8x1[context.Context, int64, func(*State) bool, func(*Partial) bool, func(*Dual) bool, func(*Stats) bool, func(int64, State), func(Sums), error](&stepAFn{})
	register.Combiner3[Sums, Sums, Sums](&sumsFn{})
	register.DoFn4x1[Sums, func(*Dual) bool, func(*Stats) bool, func(Dual), error](&dualFn{})
	register.DoFn5x1[int64, State, func(*Dual) bool, func(*Stats) bool, func(int64, State), error](&stepBFn{})
	register.Emitter1[Dual]()
	register.Iter1[Dual]()
	register.Emitter2[int64, State]()
	register.Emitter1[Sums]()
	register.Iter1[State]()
}
