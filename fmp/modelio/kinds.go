package modelio

// The library's kinds are always known to model files: those of package
// layers (imported by this package), fmp's wrapper, and fairtrain's
// encoder (the model FairGNN, NIFTY and FairVGNN train), imported here so
// that a program that only loads a model file needs no import of those
// packages of its own. A kind of the user's own is known once its package
// is imported, as it is by any program that builds that model.
import (
	_ "github.com/fairmp/fairmp/fmp"
	_ "github.com/fairmp/fairmp/layers/fairtrain"
)
