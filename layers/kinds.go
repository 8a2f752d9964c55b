package layers

// Kind names of the models of this package.
const (
	KindLinear  = "linear"
	KindMLP     = "mlp"
	KindGCNConv = "gcnconv"
	KindGCN     = "gcn"
	KindSGC     = "sgc"
	KindAPPNP   = "appnp"
	KindJKNet   = "jknet"
)

// Kind and SaveConfig let layers/modelio save each model of this package:
// Kind names its entry in modelio's table of kinds, SaveConfig returns the
// configuration that entry rebuilds the model from.

// Kind returns KindLinear.
func (l *Linear) Kind() string { return KindLinear }

// SaveConfig returns the layer's configuration.
func (l *Linear) SaveConfig() any { return l.cfg }

// Kind returns KindMLP.
func (m *MLP) Kind() string { return KindMLP }

// SaveConfig returns the model's configuration.
func (m *MLP) SaveConfig() any { return m.cfg }

// Kind returns KindGCNConv.
func (l *GCNConv) Kind() string { return KindGCNConv }

// SaveConfig returns the layer's configuration.
func (l *GCNConv) SaveConfig() any { return l.cfg }

// Kind returns KindGCN.
func (m *GCN) Kind() string { return KindGCN }

// SaveConfig returns the model's configuration.
func (m *GCN) SaveConfig() any { return m.cfg }

// Kind returns KindSGC.
func (m *SGC) Kind() string { return KindSGC }

// SaveConfig returns the model's configuration.
func (m *SGC) SaveConfig() any { return m.cfg }

// Kind returns KindAPPNP.
func (m *APPNP) Kind() string { return KindAPPNP }

// SaveConfig returns the model's configuration.
func (m *APPNP) SaveConfig() any { return m.cfg }

// Kind returns KindJKNet.
func (m *JKNet) Kind() string { return KindJKNet }

// SaveConfig returns the model's configuration.
func (m *JKNet) SaveConfig() any { return m.cfg }
