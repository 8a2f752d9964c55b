package main

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/features"
)

// columns are the model's input columns as a request names them: the
// numeric columns of the feature schema, and each categorical column
// (one name, a level as its value) in place of its one-hot columns.
type columns struct {
	schema features.Schema
	names  []string           // the request's column names, in the schema's order
	byName map[string]*column // by request name
	limit  float64            // the largest magnitude a scaled value may have
	// factor is -feature-range-factor (0: no check); lenient (replay)
	// counts the values outside it in outside instead of refusing them.
	factor  float64
	lenient bool
	outside int
}

// column is one column of a request: numeric (the schema's column
// index) or categorical (its levels' column indices).
type column struct {
	name   string
	index  int
	levels map[string]int // nil for a numeric column
	order  []string       // the levels, in the schema's order
}

func newColumns(s features.Schema, limit float64) *columns {
	c := &columns{schema: s, byName: map[string]*column{}, limit: limit}
	onehot := map[string]*column{} // one-hot column name → its categorical column
	for _, cat := range s.Categorical {
		col := &column{name: cat.Column, levels: map[string]int{}, order: cat.Levels}
		for _, l := range cat.Levels {
			onehot[features.OneHotName(cat.Column, l)] = col
		}
		c.byName[cat.Column] = col
	}
	for j, name := range s.Names {
		if col, ok := onehot[name]; ok {
			if len(col.levels) == 0 {
				c.names = append(c.names, col.name)
			}
			for _, l := range col.order {
				if features.OneHotName(col.name, l) == name {
					col.levels[l] = j
				}
			}
			continue
		}
		c.byName[name] = &column{name: name, index: j}
		c.names = append(c.names, name)
	}
	return c
}

// list names the columns for a message (at most 20, then a count).
func (c *columns) list() string {
	const most = 20
	if len(c.names) <= most {
		return strings.Join(c.names, ", ")
	}
	return fmt.Sprintf("%s, ... (%d in all)", strings.Join(c.names[:most], ", "), len(c.names))
}

// row puts a node's features in the model's columns, scaled the model's
// way, into dst (len(schema.Names) values); at names the features in a
// message and id the node. With factor > 0 a numeric value outside
// factor times its column's training range (about the range's centre)
// is refused, or with lenient counted in outside and kept.
func (c *columns) row(at, id string, f map[string]value, dst []float64) *apiError {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first bad column named is always the same
	for _, k := range keys {
		v := f[k]
		col, ok := c.byName[k]
		fk := field(at, k)
		if !ok {
			return fieldError(fk, "unknown column; the model's columns are %s", c.list())
		}
		if col.levels == nil {
			if v.Text {
				return fieldError(fk, "want a number, got the string %q", cut(v.Level))
			}
			x := c.schema.Scale(col.index, v.Num)
			if aerr := c.inRange(fk, id, col, v.Num, x); aerr != nil {
				return aerr
			}
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > c.limit {
				return fieldError(fk, "%v scales to %v, beyond what the model can take (±%.3g); the value is far outside the training data's range", v.Num, x, c.limit)
			}
			dst[col.index] = x
			continue
		}
		if !v.Text {
			return fieldError(fk, "a categorical column: want one of its levels as a string (%s), got a number", quoteList(col.order))
		}
		j, ok := col.levels[v.Level]
		if !ok {
			return fieldError(fk, "unknown level %q; the levels are %s", cut(v.Level), quoteList(col.order))
		}
		for _, l := range col.order {
			dst[col.levels[l]] = c.schema.Scale(col.levels[l], 0)
		}
		dst[j] = c.schema.Scale(j, 1)
	}
	if len(f) < len(c.byName) {
		var missing []string
		for _, name := range c.names {
			if _, ok := f[name]; !ok {
				missing = append(missing, name)
			}
		}
		return fieldError(at, "missing column(s) %s; every one of the model's %d columns is needed", strings.Join(missing, ", "), len(c.names))
	}
	return nil
}

// inRange checks raw value v of numeric column col (x scaled) against
// -feature-range-factor: the training range [lo, hi] scales to [−1, 1],
// so a value is inside factor times the range, about its centre, when
// |x| ≤ factor. A constant column (hi = lo) scales every value to 0 and
// is not checked; neither is anything without a range (c.schema.Scaling
// nil, refused at start-up unless the factor is 0).
func (c *columns) inRange(fk, id string, col *column, v, x float64) *apiError {
	sc := c.schema.Scaling
	if c.factor <= 0 || sc == nil {
		return nil
	}
	lo, hi := sc.Min[col.index], sc.Max[col.index]
	if !(hi > lo) || math.Abs(x) <= c.factor {
		return nil
	}
	if c.lenient {
		c.outside++
		return nil
	}
	mid, half := lo/2+hi/2, (hi/2-lo/2)*c.factor
	e := fieldError(fk, "node %q: %s = %v is outside the range this service takes for %s, %.4g to %.4g (-feature-range-factor %v times the training range %.4g to %.4g, about its centre). A value this far out is likely an error (a unit, a typo) and would change the answers of the nodes attached near it: check it; to take it anyway, restart serve with a larger -feature-range-factor (0: no check)",
		cut(id), cut(col.name), v, cut(col.name), mid-half, mid+half, c.factor, lo, hi)
	e.rangeColumn = col.name
	return e
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// state is the graph in memory: the base graph and every node and edge
// accepted since, with what was answered for each accepted node. Only
// the writer goroutine touches it.
type state struct {
	d     int          // feature columns
	base  *graph.Graph // the base graph (nodes 0..nBase−1)
	nBase int
	ids   []string       // every node's id
	index map[string]int // id → node
	x     []float64      // n × d features, scaled
	sens  []int          // n groups
	extra [][]int32      // per node, the neighbours added since the base graph
	// For accepted node i (node nBase+i): its content's digest, and what
	// was answered: the probabilities (classes per node).
	digest [][32]byte
	probs  []float64
	// Scratch of ball: the last search that reached each node, and the
	// node's row in the ball.
	seen  []uint32
	local []int32
	epoch uint32
}

func newState(g *graph.Graph, ids []string, x []float64, d int, sens []int) *state {
	n := g.N()
	st := &state{d: d, base: g, nBase: n, ids: ids, index: make(map[string]int, n), x: x, sens: sens, extra: make([][]int32, n)}
	for i, id := range ids {
		st.index[id] = i
	}
	return st
}

func (st *state) n() int { return len(st.ids) }

// accepted returns the number of nodes accepted since the base graph.
func (st *state) accepted() int { return len(st.ids) - st.nBase }

// change is what apply did, for undo.
type change struct {
	n       int      // nodes before
	touched []int    // old nodes that got neighbours, one entry per neighbour
	added   []string // the new ids
	edges   [][2]int // the edges added
}

// apply adds a checked request's nodes (rows: their scaled features) and
// edges to the state.
func (st *state) apply(req *request, rows []float64, groups []int, classes int) (*change, []int) {
	ch := &change{n: st.n()}
	nodes := make([]int, len(req.Nodes))
	for k, nd := range req.Nodes {
		i := st.n()
		nodes[k] = i
		st.ids = append(st.ids, nd.ID)
		st.index[nd.ID] = i
		st.sens = append(st.sens, groups[k])
		st.extra = append(st.extra, nil)
		st.digest = append(st.digest, nd.digest())
		ch.added = append(ch.added, nd.ID)
	}
	st.x = append(st.x, rows...)
	both := map[[2]int]bool{} // edges between new nodes, which both ends may list
	for k, nd := range req.Nodes {
		u := nodes[k]
		for _, e := range nd.Edges {
			v := st.index[e]
			if v >= ch.n {
				p := [2]int{min(u, v), max(u, v)}
				if both[p] {
					continue
				}
				both[p] = true
			}
			st.extra[u] = append(st.extra[u], int32(v))
			st.extra[v] = append(st.extra[v], int32(u))
			ch.edges = append(ch.edges, [2]int{u, v})
			if v < ch.n {
				ch.touched = append(ch.touched, v)
			}
		}
	}
	st.probs = append(st.probs, make([]float64, len(req.Nodes)*classes)...)
	return ch, nodes
}

// undo takes back the last apply, ch.
func (st *state) undo(ch *change, classes int) {
	for k := len(ch.touched) - 1; k >= 0; k-- {
		v := ch.touched[k]
		st.extra[v] = st.extra[v][:len(st.extra[v])-1]
	}
	for _, id := range ch.added {
		delete(st.index, id)
	}
	st.ids = st.ids[:ch.n]
	st.sens = st.sens[:ch.n]
	st.extra = st.extra[:ch.n]
	st.x = st.x[:ch.n*st.d]
	st.digest = st.digest[:ch.n-st.nBase]
	st.probs = st.probs[:(ch.n-st.nBase)*classes]
}

// neighbors calls f on every neighbour of u.
func (st *state) neighbors(u int, f func(v int)) {
	if u < st.nBase {
		for _, v := range st.base.Neighbors(u) {
			f(int(v))
		}
	}
	for _, v := range st.extra[u] {
		f(int(v))
	}
}

// ball returns the subgraph induced by the nodes within radius hops of
// seeds (ascending, so that it keeps the graph's order of every node's
// neighbours), its nodes' features and groups, and the seeds' rows in
// it. A model of radius r computes the seeds' outputs on the ball of
// radius r + 1 exactly as on the whole graph: every node within r hops
// keeps all its neighbours, and so its degree. The work is proportional
// to the ball's edges.
func (st *state) ball(seeds []int, hops int) (*graph.Graph, *features.Dense, []int, []int, error) {
	n := st.n()
	if len(st.seen) < n {
		st.seen = append(st.seen, make([]uint32, n-len(st.seen))...)
		st.local = append(st.local, make([]int32, n-len(st.local))...)
	}
	st.epoch++
	if st.epoch == 0 { // wrapped: clear the marks
		clear(st.seen)
		st.epoch = 1
	}
	mark := st.epoch
	nodes := make([]int, 0, len(seeds))
	for _, s := range seeds {
		if st.seen[s] != mark {
			st.seen[s] = mark
			nodes = append(nodes, s)
		}
	}
	for frontier, h := nodes, 0; h < hops && len(frontier) > 0; h++ {
		start := len(nodes)
		for _, u := range frontier {
			st.neighbors(u, func(v int) {
				if st.seen[v] != mark {
					st.seen[v] = mark
					nodes = append(nodes, v)
				}
			})
		}
		frontier = nodes[start:]
	}
	sort.Ints(nodes)
	for r, u := range nodes {
		st.local[u] = int32(r)
	}
	// The ball's rows, in compressed sparse row form: a base node's base
	// neighbours are ascending and below every added node, its added
	// neighbours ascending once sorted; the local numbering keeps the
	// order.
	indptr := make([]int, 1, len(nodes)+1)
	var indices []int32
	for _, u := range nodes {
		if u < st.nBase {
			for _, v := range st.base.Neighbors(u) {
				if st.seen[v] == mark {
					indices = append(indices, st.local[v])
				}
			}
		}
		start := len(indices)
		for _, v := range st.extra[u] {
			if st.seen[v] == mark {
				indices = append(indices, st.local[v])
			}
		}
		slices.Sort(indices[start:])
		indptr = append(indptr, len(indices))
	}
	g, err := graph.FromCSR(indptr, indices)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	x := make([]float64, len(nodes)*st.d)
	sens := make([]int, len(nodes))
	for r, u := range nodes {
		copy(x[r*st.d:(r+1)*st.d], st.x[u*st.d:(u+1)*st.d])
		sens[r] = st.sens[u]
	}
	xd, err := features.NewDense(x, len(nodes), st.d)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	rows := make([]int, len(seeds))
	for k, s := range seeds {
		rows[k] = int(st.local[s])
	}
	return g, xd, sens, rows, nil
}

// checked is a request ready to apply: its rows and groups, or, for a
// repeat of nodes accepted before, their nodes.
type checked struct {
	req    *request
	rows   []float64
	groups []int
	repeat []int // the nodes repeated (nil: a new request)
}

// check validates req against the state: ids new (or a whole repeat of
// accepted nodes with the same content), features, groups and edges.
func (st *state) check(req *request, cols *columns, groups map[string]int, groupNames []string) (*checked, *apiError) {
	inReq := make(map[string]int, len(req.Nodes))
	var repeat, fresh []int
	for k, nd := range req.Nodes {
		f := fmt.Sprintf("nodes[%d].id", k)
		if j, dup := inReq[nd.ID]; dup {
			return nil, fieldError(f, "%q repeats nodes[%d].id; ids are unique", cut(nd.ID), j)
		}
		inReq[nd.ID] = k
		i, exists := st.index[nd.ID]
		switch {
		case !exists:
			fresh = append(fresh, k)
		case i < st.nBase:
			return nil, &apiError{Status: http.StatusConflict, Field: f, Msg: fmt.Sprintf("%s: %q is a node of the base graph (-nodes); a new node needs a new id", f, cut(nd.ID))}
		case st.digest[i-st.nBase] != nd.digest():
			return nil, &apiError{Status: http.StatusConflict, Field: f, Msg: fmt.Sprintf("%s: %q was accepted before with other content (features, group or edges); a new node needs a new id, and a repeated request must repeat its nodes exactly", f, cut(nd.ID))}
		default:
			repeat = append(repeat, i)
		}
	}
	if len(repeat) > 0 {
		if len(fresh) > 0 {
			k := fresh[0]
			return nil, &apiError{Status: http.StatusConflict, Field: fmt.Sprintf("nodes[%d].id", k), Msg: fmt.Sprintf("nodes[%d].id: %q is new, but other nodes of the request were accepted before; a request is either new or a repeat of accepted nodes, whole", k, cut(req.Nodes[k].ID))}
		}
		return &checked{req: req, repeat: repeat}, nil
	}
	c := &checked{req: req, rows: make([]float64, len(req.Nodes)*st.d), groups: make([]int, len(req.Nodes))}
	for k, nd := range req.Nodes {
		at := fmt.Sprintf("nodes[%d]", k)
		if err := cols.row(at+".features", nd.ID, nd.Features, c.rows[k*st.d:(k+1)*st.d]); err != nil {
			return nil, err
		}
		g, ok := groups[nd.Group]
		if !ok {
			return nil, fieldError(at+".group", "unknown group %q; the groups are %s", cut(nd.Group), quoteList(groupNames))
		}
		c.groups[k] = g
		listed := make(map[string]int, len(nd.Edges))
		for e, id := range nd.Edges {
			fe := fmt.Sprintf("%s.edges[%d]", at, e)
			if j, dup := listed[id]; dup {
				return nil, fieldError(fe, "%q repeats edges[%d]", cut(id), j)
			}
			listed[id] = e
			if id == nd.ID {
				return nil, fieldError(fe, "the node's own id; a node is not its own neighbour")
			}
			if _, ok := inReq[id]; ok {
				continue
			}
			if _, ok := st.index[id]; !ok {
				return nil, fieldError(fe, "unknown node id %q: neither a node of the graph nor of this request", cut(id))
			}
		}
	}
	return c, nil
}
