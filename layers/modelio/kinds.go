package modelio

// The library's kinds are always known to model files: those of package
// layers (imported by this package) and fmp's wrapper, imported here so
// that a program that only loads an fmp model file needs no import of
// package fmp of its own. A kind of the user's own is known once its
// package is imported, as it is by any program that builds that model.
import _ "github.com/fairmp/fairmp/fmp"
