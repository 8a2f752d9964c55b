package layers

import "github.com/fairmp/fairmp/graph"

// GraphModel is a Model built on a graph. Graph returns that graph (nil
// for a layer built from a prebuilt matrix, such as NewGCNConvMatrix).
// layers/modelio records a fingerprint of it in a model file and refuses
// to load the file onto another graph.
type GraphModel interface {
	Model
	Graph() *graph.Graph
}

// Phased is a Model built with a *Phase. Phase returns it; layers/train
// refuses to train or evaluate it with a Task holding another Phase.
type Phased interface {
	Model
	Phase() *Phase
}

// Graph returns the graph the layer was built on (nil when it was built
// from a matrix).
func (l *GCNConv) Graph() *graph.Graph { return l.gr }

// Graph returns the graph the model was built on.
func (m *GCN) Graph() *graph.Graph { return m.gr }

// Graph returns the graph the model was built on.
func (m *SGC) Graph() *graph.Graph { return m.gr }

// Graph returns the graph the model was built on.
func (m *APPNP) Graph() *graph.Graph { return m.gr }

// Graph returns the graph the model was built on.
func (m *JKNet) Graph() *graph.Graph { return m.gr }

// Graph returns the graph the layer was built on.
func (l *GAT) Graph() *graph.Graph { return l.gr }

// Graph returns the graph the model was built on.
func (m *GATModel) Graph() *graph.Graph { return m.gr }

// Phase returns the phase the model was built with.
func (m *MLP) Phase() *Phase { return m.phase }

// Phase returns the phase the model was built with.
func (m *GCN) Phase() *Phase { return m.phase }

// Phase returns the phase the model was built with.
func (m *APPNP) Phase() *Phase { return m.phase }

// Phase returns the phase the model was built with.
func (m *JKNet) Phase() *Phase { return m.phase }

// Phase returns the phase the layer was built with.
func (l *GAT) Phase() *Phase { return l.phase }

// Phase returns the phase the model was built with.
func (m *GATModel) Phase() *Phase { return m.phase }

var (
	_ GraphModel = (*GCNConv)(nil)
	_ GraphModel = (*GCN)(nil)
	_ GraphModel = (*SGC)(nil)
	_ GraphModel = (*APPNP)(nil)
	_ GraphModel = (*JKNet)(nil)
	_ GraphModel = (*GAT)(nil)
	_ GraphModel = (*GATModel)(nil)
	_ Phased     = (*MLP)(nil)
	_ Phased     = (*GCN)(nil)
	_ Phased     = (*APPNP)(nil)
	_ Phased     = (*JKNet)(nil)
	_ Phased     = (*GAT)(nil)
	_ Phased     = (*GATModel)(nil)
)
