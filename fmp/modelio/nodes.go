package modelio

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
)

// Role is the part of its split a node of the saved graph was in.
type Role uint8

// The roles a node of the saved graph can have. Only RoleTest and
// RoleNone nodes were never trained on or chosen on: a held-out figure on
// a model's own graph uses those (and nodes the model never saw).
const (
	// RoleNone: the node was in the graph (its features and edges fed
	// the training nodes' predictions) but in no part of the split
	// (unlabelled, or left out of the split).
	RoleNone Role = iota
	// RoleTrain: a training node (its label was fitted).
	RoleTrain
	// RoleVal: a validation node (the epoch, FMP's setting or the
	// thresholds were chosen on its label).
	RoleVal
	// RoleTest: a test node (held out).
	RoleTest
)

// String returns "none", "train", "val" or "test".
func (r Role) String() string {
	switch r {
	case RoleNone:
		return "none"
	case RoleTrain:
		return "train"
	case RoleVal:
		return "val"
	case RoleTest:
		return "test"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// HeldOut reports whether a node of this role was never trained on and
// never chosen on (RoleTest and RoleNone).
func (r Role) HeldOut() bool { return r == RoleTest || r == RoleNone }

// MaxNodes is the most nodes a model file's node record holds (Nodes):
// 9 bytes each, 604 MB. The parameters and the record together are at
// most MaxParamBytes.
const MaxNodes = 1 << 26

// Nodes records the nodes of the graph a model was trained on, each by
// its id, with the part of the split it was in: whoever scores a grown
// graph later tells the nodes the model saw (and which of them it
// trained or chose on) from new ones by id, in any row order, and
// computes held-out figures on the others.
//
// The file keeps each id as the first 8 bytes of its SHA-256 (sorted),
// and a byte for its role: 9 bytes a node, 9 MB at 1M nodes, read into
// 9 MB of memory and looked up by binary search. Two different ids
// share a key with probability about n²/2⁶⁵ (3·10⁻⁸ at 1M nodes); an id
// built on purpose to collide with a saved one (about 2³² SHA-256 work)
// would be taken for that node. Ids are not recoverable from the file
// beyond guessing them.
//
// A graph read without an id column is recorded by row (ByRow): its
// nodes are then known by their 0-based row number, which is all there
// is to know them by, and a table of the same nodes in another order
// cannot be matched. Give the node table an id column to avoid that.
type Nodes struct {
	// ByRow reports nodes recorded by row number rather than by id.
	ByRow bool
	keys  []uint64 // ascending, distinct
	roles []Role   // roles[k] is keys[k]'s
}

// NewNodes records n nodes: ids[i] is node i's id (nil: the nodes are
// known by row, ByRow), and train, val and test are the split's node
// indices (0 ≤ i < n; a node in none of them has RoleNone; a node in
// several parts, as when a split makes its validation and test nodes
// one list, takes the first of train, val, test: it was trained or
// chosen on, so it is not held out). It returns an error for ids of
// another length, an empty or repeated id, an index out of range, or
// more than MaxNodes nodes.
func NewNodes(n int, ids []string, train, val, test []int) (*Nodes, error) {
	if n < 0 || n > MaxNodes {
		return nil, fmt.Errorf("modelio: NewNodes: %d nodes, want 0 to %d (MaxNodes)", n, MaxNodes)
	}
	if ids != nil && len(ids) != n {
		return nil, fmt.Errorf("modelio: NewNodes: %d ids for %d nodes", len(ids), n)
	}
	role := make([]Role, n)
	for _, part := range []struct {
		nodes []int
		r     Role
	}{{train, RoleTrain}, {val, RoleVal}, {test, RoleTest}} {
		for _, i := range part.nodes {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("modelio: NewNodes: %s node %d out of range [0, %d)", part.r, i, n)
			}
			if role[i] == RoleNone {
				role[i] = part.r
			}
		}
	}
	type entry struct {
		key uint64
		i   int
	}
	es := make([]entry, n)
	for i := range es {
		var id string
		if ids == nil {
			id = strconv.Itoa(i)
		} else if id = ids[i]; id == "" {
			return nil, fmt.Errorf("modelio: NewNodes: node %d has an empty id", i)
		}
		es[i] = entry{nodeKey(id, ids == nil), i}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if a.key < b.key {
			return -1
		} else if a.key > b.key {
			return 1
		}
		return 0
	})
	out := &Nodes{ByRow: ids == nil, keys: make([]uint64, n), roles: make([]Role, n)}
	for k, e := range es {
		if k > 0 && e.key == es[k-1].key {
			a, b := es[k-1].i, e.i
			if ids != nil && ids[a] == ids[b] {
				return nil, fmt.Errorf("modelio: NewNodes: nodes %d and %d have the same id %q", a, b, ids[a])
			}
			return nil, fmt.Errorf("modelio: NewNodes: the ids of nodes %d and %d share a 64-bit key (a SHA-256 collision of their first 8 bytes): rename one", a, b)
		}
		out.keys[k], out.roles[k] = e.key, role[e.i]
	}
	return out, nil
}

// nodeKey is the key an id is recorded by: the first 8 bytes of the
// SHA-256 of "id:" and the id, or of "row:" and the row number.
func nodeKey(id string, byRow bool) uint64 {
	var buf [64]byte
	b := buf[:0]
	if byRow {
		b = append(b, "row:"...)
	} else {
		b = append(b, "id:"...)
	}
	b = append(b, id...)
	s := sha256.Sum256(b)
	return binary.LittleEndian.Uint64(s[:])
}

// Len returns the number of nodes recorded.
func (n *Nodes) Len() int {
	if n == nil {
		return 0
	}
	return len(n.keys)
}

// Lookup returns the role of the node with this id (for ByRow, its row
// number in decimal, as strconv.Itoa writes it) and whether the saved
// graph had it.
func (n *Nodes) Lookup(id string) (Role, bool) {
	if n == nil {
		return RoleNone, false
	}
	k, ok := slices.BinarySearch(n.keys, nodeKey(id, n.ByRow))
	if !ok {
		return RoleNone, false
	}
	return n.roles[k], true
}

// Counts returns how many saved nodes had each role, indexed by Role.
func (n *Nodes) Counts() [4]int {
	var c [4]int
	if n == nil {
		return c
	}
	for _, r := range n.roles {
		c[r]++
	}
	return c
}

// nodesHeader is the header's description of the node record that
// follows the parameters: its count and how nodes are keyed.
type nodesHeader struct {
	Count int    `json:"count"`
	Key   string `json:"key"`
}

// The keys a node record may say it uses.
const (
	keyByID  = "sha256-64:id"
	keyByRow = "sha256-64:row"
)

func (n *Nodes) header() *nodesHeader {
	h := &nodesHeader{Count: len(n.keys), Key: keyByID}
	if n.ByRow {
		h.Key = keyByRow
	}
	return h
}

// check validates a node record's description.
func (h *nodesHeader) check() error {
	if h.Count < 0 || h.Count > MaxNodes {
		return fmt.Errorf("%w: nodes.count %d, want 0 to %d (MaxNodes)", ErrFormat, h.Count, MaxNodes)
	}
	if h.Key != keyByID && h.Key != keyByRow {
		return fmt.Errorf("%w: nodes.key %q, want %q or %q", ErrFormat, h.Key, keyByID, keyByRow)
	}
	return nil
}

// bytes is the record's size in the file: 8 bytes a key, 1 a role.
func (h *nodesHeader) bytes() int { return 9 * h.Count }

// write writes the record: the keys (little-endian uint64s, ascending),
// then the roles.
func (n *Nodes) write(w *bufio.Writer) {
	var b [8]byte
	for _, k := range n.keys {
		binary.LittleEndian.PutUint64(b[:], k)
		w.Write(b[:])
	}
	for _, r := range n.roles {
		w.WriteByte(byte(r))
	}
}

// readNodes reads the record h describes in chunks of buf through fill
// (which reads, counts and hashes them, and says when the file is
// truncated).
func readNodes(h *nodesHeader, buf []byte, fill func([]byte) error) (*Nodes, error) {
	n := &Nodes{ByRow: h.Key == keyByRow}
	for left := h.Count; left > 0; {
		m := min(left, len(buf)/8)
		b := buf[:8*m]
		if err := fill(b); err != nil {
			return nil, err
		}
		for k := 0; k < m; k++ {
			n.keys = append(n.keys, binary.LittleEndian.Uint64(b[8*k:]))
		}
		left -= m
	}
	for left := h.Count; left > 0; {
		m := min(left, len(buf))
		b := buf[:m]
		if err := fill(b); err != nil {
			return nil, err
		}
		for _, c := range b {
			n.roles = append(n.roles, Role(c))
		}
		left -= m
	}
	return n, nil
}

// validate checks a record read from a file (after its checksum):
// keys strictly ascending, every role known.
func (n *Nodes) validate() error {
	for k := 1; k < len(n.keys); k++ {
		if n.keys[k] <= n.keys[k-1] {
			return fmt.Errorf("%w: the node record's keys are not strictly ascending at entry %d", ErrFormat, k)
		}
	}
	for k, r := range n.roles {
		if r > RoleTest {
			return fmt.Errorf("%w: the node record's entry %d has role %d, want 0 to 3", ErrFormat, k, r)
		}
	}
	return nil
}
