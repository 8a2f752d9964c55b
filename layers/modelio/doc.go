// Package modelio saves and loads fairmp models.
//
// Save writes a model's kind, configuration and parameters; Load rebuilds
// the model in a gorgonia graph from that file (see FormatName for the
// format). Every model of layers and fmp is in modelio's own table of
// kinds, so loading any of them works whatever packages a program
// imports. A model type of the user's own is made savable by
// implementing Savable (Kind and SaveConfig) and loadable by calling
// Register with a Builder for its kind, once, before Load.
//
// # Errors
//
// Save and Load return errors, never panic, on anything a file or a
// caller can cause: another format or version, an unknown kind, a
// configuration the model's constructor rejects, a graph of another size,
// parameters that do not match, truncated data.
package modelio
