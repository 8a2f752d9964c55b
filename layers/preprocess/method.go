package preprocess

import (
	"errors"

	"github.com/fairmp/fairmp/graph"
	"github.com/fairmp/fairmp/internal/named"
)

// Method is a pre-processing method: it debiases a graph and its
// features before any model is trained on them.
type Method interface {
	// Name is the method's short name, as Lookup and the commands take
	// it.
	Name() string
	// WithSeed returns a copy whose random choices are seeded by seed.
	WithSeed(seed int64) Method
	// Validate checks every field of the configuration.
	Validate() error
	// Debias returns a debiased copy of the graph g and of the n × d
	// row-major feature matrix x, given each node's sensitive group
	// (sens, −1 unknown). It never modifies its inputs.
	Debias(g *graph.Graph, x []float64, d int, sens []int) (*Debiased, error)
}

// Debiased is what a pre-processing method returns: a new graph and a new
// feature matrix of the same shape (same nodes, same columns, so that a
// model's input width and the data set's column names still hold), and
// what changed.
type Debiased struct {
	// Graph is the debiased graph on the same nodes.
	Graph *graph.Graph
	// Features is the debiased n × d feature matrix, row-major.
	Features []float64
	// Added and Removed count the undirected edges added to and removed
	// from the input graph.
	Added, Removed int
	// Masked lists the feature columns set to zero, ascending.
	Masked []int
	// Weights is, for EDITS, the learned weight of each feature column
	// (in [0, 1]; the smallest are Masked); nil for a method without.
	Weights []float64
	// Trace is, for EDITS, the critic's distance D between the groups
	// after each epoch (up to the clip bound, the Wasserstein distance
	// EDITS minimises), to see the debiasing converge; nil for a method
	// without.
	Trace []float64
}

var _ Method = EDITSConfig{}

// methods is the one list of the package's methods: Lookup, Names and
// Methods read it, and through them the commands and the lab.
func methods() []Method {
	return []Method{DefaultEDITSConfig()}
}

// Methods returns every method at its defaults, in a fixed order.
func Methods() []Method { return methods() }

// Names returns the methods' names, in Methods' order.
func Names() []string { return named.Names(methods()) }

// ErrUnknownMethod is returned by Lookup for a name no method has.
var ErrUnknownMethod = errors.New("preprocess: unknown method")

// Lookup returns the method named name at its defaults, or an error
// wrapping ErrUnknownMethod that lists the names.
func Lookup(name string) (Method, error) { return named.Lookup(methods(), name, ErrUnknownMethod) }
