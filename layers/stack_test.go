package layers

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStackConfigJSON: embedding StackConfig keeps the JSON keys saved
// model files use (the keys each configuration had as flat fields).
func TestStackConfigJSON(t *testing.T) {
	stack := []string{"name", "in", "classes", "hidden", "layers", "activation", "dropout", "input_dropout", "propagation"}
	for name, c := range map[string]struct {
		cfg   any
		extra []string
	}{
		"gcn":   {DefaultGCNConfig(3, 2), []string{"bias", "seed"}},
		"appnp": {DefaultAPPNPConfig(3, 2), []string{"k", "alpha", "edge_dropout", "bias", "seed"}},
		"jknet": {DefaultJKNetConfig(3, 2), []string{"mode", "bias", "seed"}},
	} {
		b, err := json.Marshal(c.cfg)
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m))
		var got []string
		for k := range m {
			got = append(got, k)
		}
		want := append(append([]string(nil), stack...), c.extra...)
		sort.Strings(got)
		sort.Strings(want)
		assert.Equal(t, want, got, name)
	}
	var c GCNConfig
	require.NoError(t, json.Unmarshal([]byte(`{"name":"g","hidden":7,"bias":true}`), &c))
	assert.Equal(t, "g", c.Name)
	assert.Equal(t, 7, c.Hidden)
	c = DefaultGCNConfig(3, 2)
	c.Dropout = 2
	assert.ErrorContains(t, c.Validate(), "Dropout")
}
