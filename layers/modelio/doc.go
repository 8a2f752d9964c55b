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
// # Integrity
//
// A model file (format version 2, see FormatName) ends with a SHA-256
// checksum of its header and parameters, so truncation and any changed
// byte are detected before Load adds anything to the gorgonia graph; its
// header is parsed strictly (exact keys, nothing unknown); non-finite
// parameters are refused when saving and when loading. The file records
// a fingerprint of the graph a graph model was built on (nodes, edges and
// structure, graph.Graph.Fingerprint) and of the sensitive attribute of a
// model that carries one (fmp's): loading onto another graph, or with
// Env.Sens set to another attribute, is an error saying what differs.
// Version 1 files, written before checksums, are refused (ErrVersion).
//
// # Errors
//
// Save and Load return errors, never panic, on anything a file or a
// caller can cause. Load's errors wrap ErrFormat, ErrVersion, ErrCorrupt,
// ErrUnknownKind or ErrMismatch (test with errors.Is), or the model
// constructor's error for a configuration it rejects.
package modelio
