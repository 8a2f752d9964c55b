package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorgonia.org/tensor"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/graph/features"
	"github.com/fairmp/fairmp/metrics"
)

// service is the scoring service: the model, the graph in memory, the
// log, and what /stats reads.
type service struct {
	o    *options
	sc   *score.Scorer
	hops int // the radius of the balls scored on: the scorer's + 1
	// frozen, with -fmp frozen, holds every node's FMP states (the base
	// graph's frozen at start-up) and whole the graph they are on.
	frozen *score.Frozen
	whole  *graph.Graph
	// broken is set when the log could not be written after frozen had
	// taken the batch's nodes (it cannot give them back): no request is
	// accepted until a restart replays the log.
	broken  error
	classes int
	opt     metrics.Options
	cols    *columns
	groups  map[string]int
	names   []string // group names, by group id
	j       *journal
	st      *state // the writer's alone
	queue   chan *job
	sem     chan struct{}
	quit    chan struct{} // closed to stop the writer
	done    chan struct{} // closed when the writer has stopped

	// What /stats reads, published by the writer after each commit:
	// the accepted nodes' groups and probabilities (prefixes that never
	// change once published), and the per-group decision counts.
	mu       sync.RWMutex
	pubSens  []int
	pubProbs []float64
	pubX     []float64 // the accepted nodes' features, scaled (d a row)
	requests int
	field    int // the nodes scored on, summed over the requests
	count    []int
	positive []int
	// Requests refused for a feature outside -feature-range-factor
	// times its training range, by that feature; the values outside it
	// the log held at start-up.
	rangeRefused    int
	rangeBy         map[string]int
	replayedOutside int

	statsMu   sync.Mutex // guards the last drift computed
	driftN    int
	driftAt   time.Time
	driftLast *metrics.Drift
	driftNote string
}

// job is one parsed request waiting for the writer.
type job struct {
	req   *request
	reply chan response
}

// response is an HTTP answer: status, JSON body and whether it repeats an
// earlier answer.
type response struct {
	status int
	body   []byte
	repeat bool
}

// logHeader is the log's first record: the model and base graph it was
// written for. A log is replayed only onto the same ones, so that replay
// gives every node the answer it was given.
type logHeader struct {
	Format    string `json:"format"`
	FMP       string `json:"fmp"`
	Model     string `json:"model_sha256"`
	Base      string `json:"base_sha256"`
	BaseNodes int    `json:"base_nodes"`
	BaseEdges int    `json:"base_edges"`
}

// openService loads the model and the base graph, opens the log and
// replays it.
func openService(ctx context.Context, o *options, stderr io.Writer) (*service, error) {
	start := time.Now()
	sc, modelSum, err := openModel(o)
	if err != nil {
		return nil, err
	}
	h := sc.Header()
	if h.Features == nil {
		return nil, badInput("-model %s records no feature schema: serve cannot tell which request column is which or how to scale it. Save the model with its schema (modelio.SaveConfig.Features; the model.fmp debias writes has it)", o.model)
	}
	if sc.Hops() < 0 {
		return nil, fmt.Errorf("-model %s: the scorer computes on the whole graph; serve scores new nodes on their receptive field", o.model)
	}
	if o.fmp == "frozen" && !sc.FMP() {
		return nil, badInput("-fmp frozen is for an fmp model; -model %s is a %s model, whose scores depend on its receptive field alone: leave -fmp out", o.model, h.Kind)
	}
	if o.rangeFactor > 0 && h.Features.Scaling == nil {
		return nil, badInput("-model %s records no training range of its features (its schema has no min-max scaling, as debias -no-scale saves): serve cannot refuse values far outside it (-feature-range-factor %v). Start with -feature-range-factor 0 to take every finite value, or save the model with its scaling", o.model, o.rangeFactor)
	}
	o.files.Schema = h.Features
	o.files.FeatureLimit = datasets.FeatureLimit64
	if h.Dtype == tensor.Float32 {
		o.files.FeatureLimit = datasets.FeatureLimit32
	}
	ds, err := datasets.LoadFiles(o.files)
	if err != nil {
		return nil, badInput("%s", flagWords.Replace(err.Error()))
	}
	for _, w := range ds.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", flagWords.Replace(w))
	}
	if err := sortByID(ds); err != nil {
		return nil, fmt.Errorf("-nodes %s: %w", o.files.Nodes, err)
	}
	if ds.NumFeatures != sc.In() {
		return nil, badInput("-nodes %s has %d feature columns, -model %s takes %d", o.files.Nodes, ds.NumFeatures, o.model, sc.In())
	}
	s := &service{o: o, sc: sc, hops: sc.Hops() + 1, classes: sc.Classes(), opt: metrics.DefaultOptions(),
		cols: newColumns(*h.Features, o.files.FeatureLimit), groups: map[string]int{},
		queue: make(chan *job, o.maxPending), sem: make(chan struct{}, o.maxPending), quit: make(chan struct{}), done: make(chan struct{})}
	ng := 0
	for _, g := range ds.Sens {
		ng = max(ng, g+1)
	}
	s.names = ds.GroupNames
	if s.names == nil {
		for g := range ng {
			s.names = append(s.names, strconv.Itoa(g))
		}
	}
	for g, name := range s.names {
		s.groups[name] = g
	}
	s.count, s.positive = make([]int, len(s.names)), make([]int, len(s.names))
	ids := ds.IDs
	if ids == nil {
		ids = make([]string, ds.N())
		for i := range ids {
			ids[i] = strconv.Itoa(i)
		}
	}
	s.st = newState(ds.Graph, ids, ds.Features, ds.NumFeatures, ds.Sens)
	s.cols.factor, s.cols.lenient = o.rangeFactor, true // lenient while replaying

	if o.fmp == "frozen" {
		xs, err := features.NewDense(ds.Features, ds.N(), ds.NumFeatures)
		if err != nil {
			return nil, err
		}
		if s.frozen, err = sc.Freeze(ctx, ds.Graph, xs, ds.Sens); err != nil {
			return nil, fmt.Errorf("-fmp frozen: scoring the base graph: %w", err)
		}
		s.whole = ds.Graph
	}
	hdr, _ := json.Marshal(logHeader{Format: "fairmp-serve-log", FMP: o.fmp, Model: modelSum, Base: baseSum(ds, ids, s.names), BaseNodes: ds.N(), BaseEdges: ds.Graph.NumEdges()})
	s.j, err = openJournal(o.log, hdr, func(old []byte) error {
		var was logHeader
		if err := json.Unmarshal(old, &was); err != nil || was.Format != "fairmp-serve-log" {
			return badInput("-log %s: its header is not a serve log's (%s)", o.log, clip(old))
		}
		var now logHeader
		_ = json.Unmarshal(hdr, &now)
		switch {
		case was.FMP != now.FMP:
			return badInput("-log %s was written with -fmp %s: its answers were that semantics'. Start with -fmp %s, or give a new -log", o.log, was.FMP, was.FMP)
		case was.Model != now.Model:
			return badInput("-log %s was written with another model file (SHA-256 %s; -model %s has %s): its answers were that model's. Start with the -model it was written with, or give a new -log", o.log, was.Model, o.model, now.Model)
		case was.Base != now.Base:
			return badInput("-log %s was written on another base graph (%d nodes, %d edges; -nodes and -edges give %d and %d, or other features, groups or ids): its nodes' edges and answers were for that graph. Start with the base graph it was written on, or give a new -log", o.log, was.BaseNodes, was.BaseEdges, now.BaseNodes, now.BaseEdges)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	records, dropped, err := s.j.replay(func(k int, payload []byte) error {
		req, aerr := parseRequest(payload, 0, 0)
		if aerr != nil {
			return badInput("-log %s: record %d does not parse (%v): the log is damaged", o.log, k, aerr)
		}
		out := s.accept(req)
		if out.err != nil {
			return badInput("-log %s: record %d is refused on replay (%v): the log does not match the model and base graph", o.log, k, out.err)
		}
		if out.record == nil {
			return badInput("-log %s: record %d repeats nodes accepted before: the log is damaged", o.log, k)
		}
		s.publish(1, out.field)
		return nil
	})
	if err != nil {
		s.j.close()
		return nil, err
	}
	if dropped != "" {
		fmt.Fprintln(stderr, dropped)
	}
	// The log's requests were accepted under the rules of their time: a
	// value outside the range now is replayed as it was answered, and
	// said.
	s.cols.lenient, s.replayedOutside = false, s.cols.outside
	if s.replayedOutside > 0 {
		fmt.Fprintf(stderr, "warning: -log %s holds %d feature values outside -feature-range-factor %v times their training range (accepted with a larger factor, or before the check): they are replayed as they were answered; new requests are checked\n", o.log, s.replayedOutside, o.rangeFactor)
	}
	if !o.quiet {
		fmt.Fprintf(stderr, "serve: -model %s (%s, %d classes, receptive field %d hops), base graph %d nodes and %d edges, -log %s: %d requests (%d nodes) replayed; ready in %v\n",
			o.model, h.Kind, s.classes, sc.Hops(), ds.N(), ds.Graph.NumEdges(), o.log, records, s.st.accepted(), time.Since(start).Round(time.Millisecond))
	}
	go s.writer()
	return s, nil
}

// openModel opens the -model file with score.Open (Fitted semantics, the
// trusted keys) and returns the scorer and the file's SHA-256.
func openModel(o *options) (*score.Scorer, string, error) {
	f, err := os.Open(o.model)
	if err != nil {
		return nil, "", badInput("-model: %v", err)
	}
	defer f.Close()
	h := sha256.New()
	cfg := score.DefaultConfig()
	cfg.FMP, cfg.TrustedKeys = score.Fitted, o.trustedKeys
	sc, err := score.Open(io.TeeReader(f, h), cfg)
	switch {
	case errors.Is(err, modelio.ErrSignature):
		return nil, "", badInput("-model %s: %v: -trusted-keys lists the keys a model file must be signed by (sign it with modelio.SaveConfig.SigningKey, or leave -trusted-keys out for a file you trust)", o.model, err)
	case errors.Is(err, score.ErrNotFitted):
		return nil, "", badInput("-model %s: %v: serve applies FMP's duals fitted on the training graph to new nodes; fit them (fmp.Model.Record) and save the model again", o.model, err)
	case err != nil:
		return nil, "", badInput("-model %s: %v", o.model, err)
	}
	if _, err := io.Copy(h, f); err != nil {
		return nil, "", fmt.Errorf("-model %s: %w", o.model, err)
	}
	return sc, hex.EncodeToString(h.Sum(nil)), nil
}

// sortByID puts the base graph's nodes in the order of their ids (-id),
// so that everything after (the graph's rows, every ball's order of
// nodes and so every sum, the log's header) depends on the ids alone,
// never on the node table's row order: the same table with its rows
// shuffled answers the same bits and replays the same log. Without -id
// a node is its row, and nothing moves. It costs a sort of the ids and
// one copy of the graph's rows and features, at start-up (at 1M nodes
// and 10M edges, about a second and 100 MB more at its peak). The
// split (Dataset.Split), by row, is not moved: serve does not use it.
func sortByID(ds *datasets.Dataset) error {
	if ds.IDs == nil || slices.IsSorted(ds.IDs) {
		return nil
	}
	n, d := ds.N(), ds.NumFeatures
	perm := make([]int, n) // new row → old
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(a, b int) int { return strings.Compare(ds.IDs[a], ds.IDs[b]) })
	inv := make([]int32, n) // old → new
	for u, v := range perm {
		inv[v] = int32(u)
	}
	indptr := make([]int, 1, n+1)
	indices := make([]int32, 0, 2*ds.Graph.NumEdges())
	ids := make([]string, n)
	x := make([]float64, n*d)
	sens := make([]int, n)
	var labels []int
	if ds.Labels != nil {
		labels = make([]int, n)
	}
	for u, old := range perm {
		start := len(indices)
		for _, v := range ds.Graph.Neighbors(old) {
			indices = append(indices, inv[v])
		}
		slices.Sort(indices[start:])
		indptr = append(indptr, len(indices))
		ids[u], sens[u] = ds.IDs[old], ds.Sens[old]
		copy(x[u*d:(u+1)*d], ds.Features[old*d:(old+1)*d])
		if labels != nil {
			labels[u] = ds.Labels[old]
		}
	}
	g, err := graph.FromCSR(indptr, indices)
	if err != nil {
		return fmt.Errorf("ordering the nodes by id: %w", err)
	}
	ds.Graph, ds.IDs, ds.Features, ds.Sens, ds.Labels = g, ids, x, sens, labels
	return nil
}

// baseSum is the SHA-256 of what the answers depend on in the base
// graph: ids, features, groups and their names, and the edges.
func baseSum(ds *datasets.Dataset, ids, groups []string) string {
	h := sha256.New()
	var b [8]byte
	num := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	text := func(s string) {
		num(uint64(len(s)))
		io.WriteString(h, s)
	}
	num(uint64(ds.N()))
	for _, id := range ids {
		text(id)
	}
	num(uint64(ds.NumFeatures))
	for _, v := range ds.Features {
		num(math.Float64bits(v))
	}
	for _, g := range ds.Sens {
		num(uint64(int64(g)))
	}
	for _, g := range groups {
		text(g)
	}
	num(ds.Graph.Fingerprint())
	return hex.EncodeToString(h.Sum(nil))
}

// outcome is what accept made of a request.
type outcome struct {
	err    *apiError
	nodes  []int   // the nodes to answer for (new or repeated)
	ch     *change // the state's change (new requests)
	record []byte  // the log record (new requests)
	field  int     // the nodes scored on (new requests)
}

// accept checks req against the state and, for a new request, adds its
// nodes and edges and scores the new nodes (on the ball around them of
// the scorer's radius + 1: what their scores depend on). A request whose
// scoring fails is taken back whole.
func (s *service) accept(req *request) *outcome {
	st := s.st
	if s.broken != nil {
		return &outcome{err: &apiError{Status: http.StatusServiceUnavailable, Msg: fmt.Sprintf("the service stopped accepting (%v); restart it: it replays the log, which holds every request answered", s.broken)}}
	}
	c, aerr := st.check(req, s.cols, s.groups, s.names)
	if aerr != nil {
		return &outcome{err: aerr}
	}
	if c.repeat != nil {
		return &outcome{nodes: c.repeat}
	}
	ch, nodes := st.apply(req, c.rows, c.groups, s.classes)
	fail := func(err error) *outcome {
		st.undo(ch, s.classes)
		return &outcome{err: &apiError{Status: http.StatusInternalServerError, Msg: fmt.Sprintf("scoring the request's nodes failed: %v; nothing was accepted", err)}}
	}
	var out *score.Scores
	if s.frozen != nil {
		// Frozen.Add takes the whole grown graph (the nodes it holds
		// first, in order) and scores the new nodes on their own
		// neighbourhood; it adds nothing on an error.
		grown, err := s.whole.Grow(len(nodes), ch.edges)
		if err != nil {
			return fail(err)
		}
		x, err := features.NewDense(st.x, st.n(), st.d)
		if err != nil {
			return fail(err)
		}
		// A request is scored to completion (its field is bounded by
		// -max-edges): shutting down drains, it does not cut one short.
		field, err := s.frozen.Add(context.Background(), grown, x, st.sens)
		if err != nil {
			return fail(err)
		}
		s.whole = grown
		if out, err = s.frozen.Score(nodes); err != nil {
			s.broken = fmt.Errorf("-fmp frozen: %w", err)
			return fail(err)
		}
		out.Field = field
	} else {
		g, x, sens, rows, err := st.ball(nodes, s.hops)
		if err != nil {
			return fail(err)
		}
		if out, err = s.sc.Score(context.Background(), g, x, sens, rows); err != nil {
			return fail(err)
		}
	}
	for _, p := range out.Probs {
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return fail(fmt.Errorf("the model's output is not finite"))
		}
	}
	copy(st.probs[(nodes[0]-st.nBase)*s.classes:], out.Probs)
	return &outcome{nodes: nodes, ch: ch, record: req.canonical(), field: out.Field}
}

// decide returns the positive class's probability and the decision for
// probabilities p (one node's): with two classes, 1 when it is above
// metrics.DefaultOptions' threshold; with more, when the positive class
// is the most probable (metrics.Evaluate's rules).
func (s *service) decide(p []float64) (float64, int) {
	pos := p[s.opt.Positive]
	if len(p) == 2 {
		if pos > s.opt.Threshold {
			return pos, 1
		}
		return pos, 0
	}
	if argmax(p) == s.opt.Positive {
		return pos, 1
	}
	return pos, 0
}

// publish makes the last requests committed visible to /stats: the
// accepted nodes up to the state's.
func (s *service) publish(requests, field int) {
	st := s.st
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.pubSens); i < st.accepted(); i++ {
		g := st.sens[st.nBase+i]
		_, d := s.decide(st.probs[i*s.classes : (i+1)*s.classes])
		s.count[g]++
		s.positive[g] += d
	}
	s.pubSens = st.sens[st.nBase:st.n()]
	s.pubProbs = st.probs[:st.accepted()*s.classes]
	s.pubX = st.x[st.nBase*st.d : st.n()*st.d]
	s.requests += requests
	s.field += field
}

// writer runs the requests one batch at a time: it accepts and scores
// the requests of a batch in order, appends their records to the log in
// one write and one fsync, and only then publishes and answers them. A
// batch takes the requests waiting, up to maxBatch of them and while
// scoring has taken less than batchWork, so that under load one fsync
// serves many requests without the first waiting long for the last. If
// the log cannot be written the batch is taken back whole and every
// request of it answered 503, so that memory never holds what the log
// does not.
func (s *service) writer() {
	defer close(s.done)
	for {
		var jb *job
		select {
		case jb = <-s.queue:
		case <-s.quit:
			return
		}
		b := &batch{s: s}
		b.add(jb)
		start := time.Now()
	more:
		for len(b.jobs) < maxBatch && time.Since(start) < batchWork {
			select {
			case next := <-s.queue:
				b.add(next)
			default:
				break more
			}
		}
		b.commit()
	}
}

const (
	maxBatch  = 64
	batchWork = 5 * time.Millisecond
)

// batch is the requests accepted since the last fsync.
type batch struct {
	s       *service
	jobs    []*job
	outs    []*outcome
	records [][]byte
	changes []*change
	field   int
}

func (b *batch) add(jb *job) {
	out := b.s.accept(jb.req)
	if out.err != nil && out.err.rangeColumn != "" {
		s := b.s
		s.mu.Lock()
		s.rangeRefused++
		if s.rangeBy == nil {
			s.rangeBy = map[string]int{}
		}
		s.rangeBy[out.err.rangeColumn]++
		s.mu.Unlock()
	}
	b.jobs, b.outs = append(b.jobs, jb), append(b.outs, out)
	if out.record != nil {
		b.records = append(b.records, out.record)
		b.changes = append(b.changes, out.ch)
		b.field += out.field
	}
}

func (b *batch) commit() {
	s := b.s
	if len(b.records) > 0 {
		if err := s.j.append(b.records); err != nil {
			if s.frozen != nil {
				// Frozen cannot give nodes back: memory now holds
				// what the log does not.
				s.broken = err
			}
			for k := len(b.changes) - 1; k >= 0; k-- {
				s.st.undo(b.changes[k], s.classes)
			}
			for _, out := range b.outs {
				if out.err == nil {
					out.err = &apiError{Status: http.StatusServiceUnavailable, Msg: fmt.Sprintf("the log could not be written (%v); nothing of this request was accepted: retry later", err)}
				}
			}
		} else {
			s.publish(len(b.records), b.field)
		}
	}
	for k, jb := range b.jobs {
		jb.reply <- s.answer(b.outs[k])
	}
}

// answer is the response to an outcome.
func (s *service) answer(out *outcome) response {
	if out.err != nil {
		return errorResponse(out.err)
	}
	type node struct {
		ID          string  `json:"id"`
		Probability float64 `json:"probability"`
		Decision    int     `json:"decision"`
		// Class and Probabilities are, for a model of more than two
		// classes, the class decided (the argmax) and every class's
		// probability; a binary model's answers are without them.
		Class         *int      `json:"class,omitempty"`
		Probabilities []float64 `json:"probabilities,omitempty"`
	}
	st := s.st
	res := struct {
		Nodes []node `json:"nodes"`
	}{Nodes: make([]node, len(out.nodes))}
	for k, i := range out.nodes {
		a := i - st.nBase
		probs := st.probs[a*s.classes : (a+1)*s.classes]
		p, d := s.decide(probs)
		res.Nodes[k] = node{ID: st.ids[i], Probability: p, Decision: d}
		if s.classes > 2 {
			c := argmax(probs)
			res.Nodes[k].Class, res.Nodes[k].Probabilities = &c, probs
		}
	}
	b, _ := json.Marshal(res)
	return response{status: http.StatusOK, body: b, repeat: out.record == nil}
}

func errorResponse(e *apiError) response {
	b, _ := json.Marshal(e)
	return response{status: e.Status, body: b}
}

// handler returns the service's HTTP handler.
func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/score", s.handleScore)
	mux.HandleFunc("/stats", s.handleStats)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		write(w, errorResponse(&apiError{Status: http.StatusNotFound, Field: "path", Msg: fmt.Sprintf("path: no %s here; the endpoints are POST /score and GET /stats", cut(r.URL.Path))}))
	})
	return mux
}

func write(w http.ResponseWriter, r response) {
	w.Header().Set("Content-Type", "application/json")
	if r.repeat {
		w.Header().Set("Serve-Repeat", "true")
	}
	w.WriteHeader(r.status)
	w.Write(append(r.body, '\n'))
}

func (s *service) handleScore(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		write(w, errorResponse(&apiError{Status: http.StatusMethodNotAllowed, Field: "method", Msg: fmt.Sprintf("method: %s; /score takes POST", r.Method)}))
		return
	}
	// The body is read before a slot is taken, within -body-timeout, so
	// that a client sending slowly holds its connection (at most
	// -max-conns-per-client of them) but never a slot.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.o.bodyTimeout)) // ReadTimeout is the backstop where it cannot be set
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.o.maxBody))
	if err != nil {
		var mb *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mb):
			write(w, errorResponse(&apiError{Status: http.StatusRequestEntityTooLarge, Field: "body", Msg: fmt.Sprintf("body: larger than -max-body %d bytes; send fewer nodes per request", s.o.maxBody)}))
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			write(w, errorResponse(&apiError{Status: http.StatusRequestTimeout, Field: "body", Msg: fmt.Sprintf("body: not received within -body-timeout %v (%d bytes came); send it faster, or start serve with a larger -body-timeout", s.o.bodyTimeout, len(body))}))
		default:
			write(w, errorResponse(&apiError{Status: http.StatusBadRequest, Field: "body", Msg: fmt.Sprintf("body: reading it failed: %v", err)}))
		}
		return
	}
	// Read whole: no deadline while the request waits for the writer
	// (an expired one would cancel it).
	_ = rc.SetReadDeadline(time.Time{})
	select {
	case s.sem <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	defer func() { <-s.sem }()
	req, aerr := parseRequest(body, s.o.maxNodes, s.o.maxEdges)
	if aerr != nil {
		write(w, errorResponse(aerr))
		return
	}
	jb := &job{req: req, reply: make(chan response, 1)}
	stopping := errorResponse(&apiError{Status: http.StatusServiceUnavailable, Msg: "the service is stopping; nothing of this request was accepted: retry later"})
	select {
	case s.queue <- jb: // never blocks long: at most maxPending jobs hold the semaphore
	case <-s.done:
		write(w, stopping)
		return
	}
	select {
	case r := <-jb.reply:
		write(w, r)
	case <-s.done:
		select {
		case r := <-jb.reply: // answered as the writer stopped
			write(w, r)
		default:
			write(w, stopping)
		}
	}
}

// groupStats is one group's running decision rate over the accepted
// nodes.
type groupStats struct {
	Group    string  `json:"group"`
	Nodes    int     `json:"nodes"`
	Positive int     `json:"positive"`
	Rate     float64 `json:"rate"`
}

// stats is GET /stats's answer.
type stats struct {
	BaseNodes     int          `json:"base_nodes"`
	AcceptedNodes int          `json:"accepted_nodes"`
	Requests      int          `json:"accepted_requests"`
	Threshold     float64      `json:"threshold"`
	PositiveClass int          `json:"positive_class"`
	Groups        []groupStats `json:"groups"`
	GroupIDs      []string     `json:"group_ids"`
	// MeanField is the mean number of nodes a request was scored on:
	// the ball of the model's receptive field + 1 around its nodes
	// (the cost of a request grows with it).
	MeanField float64        `json:"mean_field_nodes"`
	Drift     *metrics.Drift `json:"drift"`
	DriftNote string         `json:"drift_note,omitempty"`
	// FeatureDrift is the drift of the features seen: the requests
	// refused for a value outside -feature-range-factor times its
	// training range.
	FeatureDrift featureDrift `json:"feature_drift"`
}

// featureDrift is /stats' account of feature values outside the range.
type featureDrift struct {
	Factor float64 `json:"feature_range_factor"`
	// Refused counts the requests refused; ByFeature the feature each
	// was refused for (the first outside, in name order).
	Refused   int            `json:"out_of_range_requests_refused"`
	ByFeature map[string]int `json:"out_of_range_by_feature"`
	// Replayed counts the values outside the range the log held at
	// start-up, accepted before (replayed as answered).
	Replayed int `json:"out_of_range_values_replayed"`
}

func (s *service) handleStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		write(w, errorResponse(&apiError{Status: http.StatusMethodNotAllowed, Field: "method", Msg: fmt.Sprintf("method: %s; /stats takes GET", r.Method)}))
		return
	}
	write(w, response{status: http.StatusOK, body: s.stats()})
}

// stats computes GET /stats's answer over the published nodes. The
// rates are current; the drift, whose bootstrap costs 1000 passes over
// the accepted nodes, is recomputed at most once per driftEvery (its
// "nodes" say how many it covers), so that polling /stats cannot starve
// the writer.
func (s *service) stats() []byte {
	s.mu.RLock()
	sens, probs, x, reqs := s.pubSens, s.pubProbs, s.pubX, s.requests
	out := stats{BaseNodes: s.st.nBase, AcceptedNodes: len(sens), Requests: reqs, Threshold: s.opt.Threshold, PositiveClass: s.opt.Positive, GroupIDs: s.names}
	if reqs > 0 {
		out.MeanField = float64(s.field) / float64(reqs)
	}
	out.FeatureDrift = featureDrift{Factor: s.o.rangeFactor, Refused: s.rangeRefused, ByFeature: map[string]int{}, Replayed: s.replayedOutside}
	for k, v := range s.rangeBy {
		out.FeatureDrift.ByFeature[k] = v
	}
	for g, name := range s.names {
		gs := groupStats{Group: name, Nodes: s.count[g], Positive: s.positive[g]}
		if gs.Nodes > 0 {
			gs.Rate = float64(gs.Positive) / float64(gs.Nodes)
		}
		out.Groups = append(out.Groups, gs)
	}
	s.mu.RUnlock()
	out.Drift, out.DriftNote = s.drift(sens, probs, x)
	body, _ := json.Marshal(out)
	return body
}

const driftEvery = time.Second

// drift compares the accepted nodes (their groups and probabilities) with
// the model file's baseline, or returns the last comparison if it is
// younger than driftEvery.
func (s *service) drift(sens []int, probs, x []float64) (*metrics.Drift, string) {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	if s.driftNote != "" && (s.driftN == len(sens) || time.Since(s.driftAt) < driftEvery) {
		return s.driftLast, s.driftNote
	}
	s.driftN, s.driftAt, s.driftLast = len(sens), time.Now(), nil
	b := s.sc.Header().Baseline
	switch {
	case b == nil:
		s.driftNote = "the model file records no baseline (modelio.SaveConfig.Baseline): there is nothing to measure drift against"
	case len(sens) == 0:
		s.driftNote = "no node accepted yet"
	default:
		// Outcomes, the group mix and the features in one call; the
		// nodes are unlabelled.
		sc := metrics.Scored{Probs: probs, Classes: s.classes, Sens: sens, X: x, D: s.st.d}
		d, err := b.Compare(sc, s.opt, metrics.DefaultBootstrapConfig())
		if err != nil {
			s.driftNote = fmt.Sprintf("drift not measured: %v", err)
		} else {
			s.driftLast = &d
			s.driftNote = fmt.Sprintf("over the first %d accepted nodes (recomputed at most once per %v); they are unlabelled: drift compares the selection rates and the criteria made of them (ΔDP, the DP ratio), each group's share of the nodes (group_mix) and each feature against the training graph's (features)", len(sens), driftEvery)
		}
	}
	return s.driftLast, s.driftNote
}

// close stops the writer once its batch is committed (requests still
// waiting are answered 503, never half-accepted) and closes the log.
func (s *service) close() error {
	close(s.quit)
	<-s.done
	return s.j.close()
}

// argmax returns the index of p's largest value (the lowest on ties).
func argmax(p []float64) int {
	best := 0
	for k, v := range p {
		if v > p[best] {
			best = k
		}
	}
	return best
}
