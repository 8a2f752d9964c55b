package preprocess

import "github.com/fairmp/fairmp/layers/fairness"

// The package's methods, registered once with package layers/fairness,
// the one registry of methods of every stage (fairness.Lookup, Names and
// Methods list them, and through them the commands and the lab). Each is
// a fairness.Pre: its Debias returns a fairness.Debiased.
var _ = fairness.MustRegister(DefaultEDITSConfig())

var (
	_ fairness.Pre    = EDITSConfig{}
	_ fairness.Seeded = EDITSConfig{}
)
