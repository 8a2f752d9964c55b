package modelio_test

import (
	"bytes"
	"context"
	"math/rand"
	"strconv"
	"testing"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/internal/problem"
	"github.com/fairmp/fairmp/layers"
	"github.com/fairmp/fairmp/layers/train"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestNodesByID: a node record made from ids and a split answers each
// id with its role in any order of lookup, answers an unknown id with
// false, and keeps row numbers apart from ids (a graph recorded by row
// knows "3" as row 3; one recorded by id does not know row 3 by that).
func TestNodesByID(t *testing.T) {
	ids := []string{"alice", "bob", "carol", "dave", "eve", "frank"}
	n, err := modelio.NewNodes(len(ids), ids, []int{0, 1}, []int{2}, []int{4})
	require.NoError(t, err)
	assert.Equal(t, 6, n.Len())
	assert.False(t, n.ByRow)
	want := map[string]modelio.Role{"alice": modelio.RoleTrain, "bob": modelio.RoleTrain, "carol": modelio.RoleVal,
		"dave": modelio.RoleNone, "eve": modelio.RoleTest, "frank": modelio.RoleNone}
	for _, id := range []string{"frank", "eve", "dave", "carol", "bob", "alice"} {
		r, ok := n.Lookup(id)
		assert.True(t, ok, id)
		assert.Equal(t, want[id], r, id)
	}
	_, ok := n.Lookup("mallory")
	assert.False(t, ok)
	_, ok = n.Lookup("0")
	assert.False(t, ok, "a record by id does not know row numbers")
	assert.Equal(t, [4]int{2, 2, 1, 1}, n.Counts())
	assert.True(t, modelio.RoleTest.HeldOut())
	assert.True(t, modelio.RoleNone.HeldOut())
	assert.False(t, modelio.RoleVal.HeldOut())
	assert.False(t, modelio.RoleTrain.HeldOut())

	rows, err := modelio.NewNodes(3, nil, []int{0}, nil, []int{2})
	require.NoError(t, err)
	assert.True(t, rows.ByRow)
	r, ok := rows.Lookup("2")
	assert.True(t, ok)
	assert.Equal(t, modelio.RoleTest, r)
	_, ok = rows.Lookup("3")
	assert.False(t, ok)

	// A node in two parts (validation and test one list) is not held
	// out: the first of train, val, test.
	both, err := modelio.NewNodes(3, nil, []int{0}, []int{1, 2}, []int{0, 1})
	require.NoError(t, err)
	for id, want := range map[string]modelio.Role{"0": modelio.RoleTrain, "1": modelio.RoleVal, "2": modelio.RoleVal} {
		r, _ := both.Lookup(id)
		assert.Equal(t, want, r, id)
	}
}

// TestNewNodesRefuses: ids that cannot identify nodes, and splits that
// are not one, are errors.
func TestNewNodesRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		n                int
		ids              []string
		train, val, test []int
		msg              string
	}{
		"short ids":    {3, []string{"a", "b"}, nil, nil, nil, "2 ids for 3 nodes"},
		"empty id":     {2, []string{"a", ""}, nil, nil, nil, "node 1 has an empty id"},
		"repeated id":  {3, []string{"a", "b", "a"}, nil, nil, nil, `same id "a"`},
		"out of range": {2, nil, []int{2}, nil, nil, "train node 2 out of range"},
		"negative":     {-1, nil, nil, nil, nil, "-1 nodes"},
	} {
		_, err := modelio.NewNodes(c.n, c.ids, c.train, c.val, c.test)
		assert.ErrorContains(t, err, c.msg, name)
	}
}

// TestSaveNodes: a model saved with a node record gives it back through
// Read, and still loads; the header counts it; a file whose record is
// damaged is refused as corrupt, and one cut inside it as truncated.
func TestSaveNodes(t *testing.T) {
	p := problem.New(t, 7, 30, 4, 2, 60, 0.7)
	task := newTask(t, p, tensor.Float64, layers.NewPhase())
	m, err := layers.NewGCN(task.Graph, p.Graph, layers.DefaultGCNConfig(p.D, p.C), task.Phase)
	require.NoError(t, err)
	_, err = train.Fit(context.Background(), m, task, fastTrain(3))
	require.NoError(t, err)
	ids := make([]string, p.N)
	for i := range ids {
		ids[i] = "node-" + strconv.Itoa(i)
	}
	rec, err := modelio.NewNodes(p.N, ids, p.Train, p.Val, p.Test)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, modelio.Save(&buf, m, modelio.SaveConfig{Nodes: rec}))

	h, err := modelio.ReadHeader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, p.N, h.Nodes)
	assert.False(t, h.NodesByRow)
	f, err := modelio.Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.NotNil(t, f.Nodes)
	// Every node's role, looked up in a shuffled order.
	order := rand.New(rand.NewSource(1)).Perm(p.N)
	role := make([]modelio.Role, p.N)
	for _, i := range p.Train {
		role[i] = modelio.RoleTrain
	}
	for _, i := range p.Val {
		role[i] = modelio.RoleVal
	}
	for _, i := range p.Test {
		role[i] = modelio.RoleTest
	}
	for _, i := range order {
		r, ok := f.Nodes.Lookup(ids[i])
		require.True(t, ok, ids[i])
		assert.Equal(t, role[i], r, ids[i])
	}
	tk := newTask(t, p, tensor.Float64, layers.NewPhase())
	_, err = modelio.Load(bytes.NewReader(buf.Bytes()), G.NewGraph(), modelio.Env{Graph: p.Graph, Phase: tk.Phase})
	require.NoError(t, err)

	// A file without the record (Save) reads with none.
	var plain bytes.Buffer
	require.NoError(t, modelio.Save(&plain, m, modelio.DefaultSaveConfig()))
	f, err = modelio.Read(bytes.NewReader(plain.Bytes()))
	require.NoError(t, err)
	assert.Nil(t, f.Nodes)
	assert.Equal(t, plain.Len()+9*p.N+len(`,"nodes":{"count":30,"key":"sha256-64:id"}`), buf.Len(), "9 bytes a node and the header's description")

	// One byte of the record changed: corrupt; cut inside it: truncated.
	b := append([]byte(nil), buf.Bytes()...)
	b[len(b)-32-5] ^= 1
	_, err = modelio.Read(bytes.NewReader(b))
	assert.ErrorIs(t, err, modelio.ErrCorrupt)
	_, err = modelio.Read(bytes.NewReader(buf.Bytes()[:buf.Len()-32-9*p.N/2]))
	assert.ErrorIs(t, err, modelio.ErrCorrupt)
	assert.ErrorContains(t, err, "node record")

	// A record of another node count than the model's graph is refused.
	short, err := modelio.NewNodes(3, nil, nil, nil, nil)
	require.NoError(t, err)
	assert.ErrorContains(t, modelio.Save(&bytes.Buffer{}, m, modelio.SaveConfig{Nodes: short}), "records 3 nodes, the model's graph has 30")
}

// BenchmarkNewNodes1M: recording a graph of 1M nodes by id (the cost
// debias pays once when it writes model.fmp), and looking every id up
// again (a -model run over the same nodes).
func BenchmarkNewNodes1M(b *testing.B) {
	const n = 1 << 20
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "user-" + strconv.Itoa(i)
	}
	train := make([]int, n/2)
	for i := range train {
		train[i] = 2 * i
	}
	b.Run("record", func(b *testing.B) {
		for b.Loop() {
			if _, err := modelio.NewNodes(n, ids, train, nil, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	rec, err := modelio.NewNodes(n, ids, train, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lookup", func(b *testing.B) {
		for b.Loop() {
			for _, id := range ids {
				if _, ok := rec.Lookup(id); !ok {
					b.Fatal(id)
				}
			}
		}
	})
}
