package main

import (
	"fmt"
	"strconv"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/graph/datasets"
)

// savedNodes is what a -model run knows of the node table's nodes: which
// the model saw in training (seen) and, for those, the part of its split
// each was in (role), told by id from the model file's node record
// (modelio.Nodes), in any row order.
type savedNodes struct {
	// seen[i] reports whether node i was in the graph the model was
	// trained on; nil when that cannot be told (note says why).
	seen []bool
	// roles[i] is a seen node's part of the saved split; nil when the
	// file records no split (a file saved before the node record: the
	// nodes it saw were found by the old rows-first rule).
	roles []modelio.Role
	// how says how the nodes were told apart, for the table and the
	// report ("by id", "by row", ...).
	how string
	// note says why they could not be, or what to beware of.
	note string
	// newNodes and savedHeldOut count the labelled held-out nodes (new,
	// and saved ones whose labels the model never used), set by heldOut.
	newNodes, savedHeldOut int
}

// nodeID is how node i of ds is known to a model file's node record:
// its id, or its row number when the table has no id column.
func nodeID(ds *datasets.Dataset, i int) string {
	if ds.IDs != nil {
		return ds.IDs[i]
	}
	return strconv.Itoa(i)
}

// recordNodes is the node record model.fmp keeps of ds: every node by
// id (by row without -id), with its part of the split.
func recordNodes(ds *datasets.Dataset) (*modelio.Nodes, error) {
	return modelio.NewNodes(ds.N(), ds.IDs, ds.Split.Train, ds.Split.Val, ds.Split.Test)
}

// identify tells the nodes of ds the -model file (header h, node record
// rec) was trained on from new ones. With a record, by id: an error when
// the record is by id and the table has no -id (the nodes could only be
// matched by row). Without one (files saved before the record), the old
// rule: the table's first rows, when they and the edges among them are
// the saved graph bit for bit (the fingerprint); their split is then
// unknown, so only new nodes count as held out.
func identify(o *options, h *modelio.Header, rec *modelio.Nodes, ds *datasets.Dataset) (savedNodes, error) {
	if rec == nil {
		seen, note := seenByFingerprint(h, ds)
		s := savedNodes{seen: seen, how: "the table's first rows (the model file records no node ids)", note: note}
		if seen != nil && note == "" {
			s.note = fmt.Sprintf("-model %s records no node ids (it was saved before they were kept): the nodes it saw were found as the table's first %d rows, whose edges are the saved graph's; which of them it trained or chose on is unknown, so only the new nodes count as held out. Save the model again with this release to know its nodes by id in any order", o.modelFile, h.Graph.Nodes)
		}
		return s, nil
	}
	if !rec.ByRow && ds.IDs == nil {
		return savedNodes{}, needIDs(o, rec)
	}
	if rec.ByRow && ds.IDs != nil {
		return savedNodes{how: "unknown", note: fmt.Sprintf("-model %s was trained on a node table without an id column, so it knows its nodes only by row number, and this table is read by -id: the nodes it saw cannot be told apart, and no figure is held out. Train with -id to know the nodes by id", o.modelFile)}, nil
	}
	s := savedNodes{seen: make([]bool, ds.N()), roles: make([]modelio.Role, ds.N()), how: "by id (-id)"}
	if rec.ByRow {
		s.how = "by row number (the model was trained without -id)"
		s.note = fmt.Sprintf("-model %s was trained on a node table without an id column: its nodes are known by row number, so this table must list them in the same rows; a reordered table would mix them up. Train with -id to know the nodes by id in any order", o.modelFile)
	}
	found := 0
	for i := range s.seen {
		s.roles[i], s.seen[i] = rec.Lookup(nodeID(ds, i))
		if s.seen[i] {
			found++
		}
	}
	if found < rec.Len() {
		s.note = joinNotes(s.note, fmt.Sprintf("%d of the %d nodes -model %s was trained on are not in this table", rec.Len()-found, rec.Len(), o.modelFile))
	}
	return s, nil
}

// needIDs is the error of a -model run whose file knows its nodes by id
// (rec) on a node table read without ids.
func needIDs(o *options, rec *modelio.Nodes) error {
	return badInput("-model %s knows the %d nodes it was trained on by their ids: give the node table's id column with -id (without it the rows could only be matched by position, and another order would mix them up)", o.modelFile, rec.Len())
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// seenByFingerprint marks the nodes of the graph the model was saved for
// in a file without a node record: the node table's first rows, when
// they and the edges among them are that graph. Otherwise it returns nil
// and says why.
func seenByFingerprint(h *modelio.Header, ds *datasets.Dataset) ([]bool, string) {
	if h.Graph == nil {
		return nil, "the model file records neither node ids nor a graph: the nodes it saw cannot be told apart (predictions.csv's \"seen\" column is empty) and no figure is held out"
	}
	n0 := h.Graph.Nodes
	if n0 > ds.N() {
		return nil, fmt.Sprintf("the graph has %d nodes, fewer than the %d the model was trained on, and the model file records no node ids: the nodes it saw cannot be told apart (predictions.csv's \"seen\" column is empty) and no figure is held out", ds.N(), n0)
	}
	var edges [][2]int
	for i := 0; i < n0; i++ {
		for _, j := range ds.Graph.Neighbors(i) {
			if int(j) > i && int(j) < n0 {
				edges = append(edges, [2]int{i, int(j)})
			}
		}
	}
	old, err := graph.FromEdges(n0, edges)
	if err != nil || !h.Graph.Describes(old) {
		return nil, fmt.Sprintf("the model file records no node ids, and the node table's first %d rows and their edges are not the graph the model was trained on: the nodes it saw cannot be told apart (predictions.csv's \"seen\" column is empty) and no figure is held out. Save the model again with this release to know its nodes by id", n0)
	}
	seen := make([]bool, ds.N())
	for i := 0; i < n0; i++ {
		seen[i] = true
	}
	return seen, ""
}

// heldOut makes ds's split the one a -model run reports on: train and
// val are the saved graph's training and validation nodes found in the
// table (the model fitted or chose on them), and test the labelled nodes
// it never trained or chose on: the new nodes and the saved nodes whose
// labels it never used (the saved test split, and nodes in no part of
// it: unlabelled then, or left out; modelio.Role.HeldOut). When the
// saved split is unknown, only new nodes are held out; when the saved
// nodes cannot be told apart at all, nothing is: test is empty. It
// counts the new and the saved held-out nodes in test (newNodes,
// savedHeldOut).
func (s *savedNodes) heldOut(ds *datasets.Dataset) {
	var sp datasets.Split
	for i, y := range ds.Labels {
		if s.seen == nil {
			break
		}
		switch {
		case !s.seen[i]:
			if y >= 0 {
				sp.Test = append(sp.Test, i)
				s.newNodes++
			}
		case s.roles == nil:
		case s.roles[i] == modelio.RoleTrain:
			sp.Train = append(sp.Train, i)
		case s.roles[i] == modelio.RoleVal:
			sp.Val = append(sp.Val, i)
		case s.roles[i].HeldOut() && y >= 0:
			sp.Test = append(sp.Test, i)
			s.savedHeldOut++
		}
	}
	ds.Split = sp
}

// heldOutWords says which nodes a -model run's test figures cover.
func heldOutWords(newNodes, savedTest int) string {
	switch {
	case newNodes+savedTest == 0:
		return "no labelled node the model never trained or chose on: no held-out figure"
	case savedTest == 0:
		return fmt.Sprintf("held out: the %d labelled new nodes", newNodes)
	case newNodes == 0:
		return fmt.Sprintf("held out: %d labelled nodes of the saved graph whose labels the model never used (its test split)", savedTest)
	}
	return fmt.Sprintf("held out: %d labelled new nodes and %d of the saved graph whose labels the model never used (its test split)", newNodes, savedTest)
}
