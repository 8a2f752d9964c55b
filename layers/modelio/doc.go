// Package modelio saves and loads fairmp models.
//
// [Save] writes a model's kind, configuration and parameters; [Load]
// rebuilds the model in a gorgonia graph from that file (see [FormatName]
// for the format). Both go through the registry of model kinds in package
// layers ([layers.Declare]): every kind declared there, the library's
// and the user's own, saves and loads with no code here. The kinds of
// package layers (mlp, gcn, sgc, appnp, gat, jknet) are always known;
// fmp's wrapper kind is known once package fmp is imported, as it is by
// any program that builds an fmp.Model (a program that only loads one
// imports it with import _ "github.com/fairmp/fairmp/fmp"). [Read]
// returns a file's kind, configuration and parameters without building
// anything, for a program that runs the model by itself (package
// fmp/fmpbeam does, on Apache Beam); it checks everything Load checks
// before building.
//
//	f, err := os.Open("model.fmp")
//	if err != nil { ... }
//	defer f.Close()
//	m, err := modelio.Load(f, g, modelio.Env{Graph: ds.Graph, Phase: task.Phase})
//	if err != nil { ... }
//	pred, err := train.Predict(m, task, nil)
//
// # Integrity
//
// A model file (format version 3, see [FormatName]) ends with a SHA-256
// checksum of its header and parameters, so truncation and any changed
// byte are detected before [Load] adds anything to the gorgonia graph; its
// header is parsed strictly (exact keys, nothing unknown); non-finite
// parameters are refused when saving and when loading. The file records
// a fingerprint of the graph a graph model was built on (nodes, edges and
// structure, graph.Graph.Fingerprint) and of the sensitive attribute of a
// model that carries one (fmp's): loading onto another graph, or with
// [Env].Sens set to another attribute, is an error saying what differs.
// Files of earlier format versions are refused (ErrVersion). The checksum
// detects accidents (truncation, a flipped bit), not edits: anyone can
// recompute it, so load model files only from sources you trust.
//
// # Errors
//
// [Save] and Load return errors, never panic, on anything a file or a
// caller can cause. Load's errors wrap [ErrFormat], ErrVersion, ErrCorrupt,
// ErrUnknownKind or ErrMismatch (test with errors.Is), or the model
// constructor's error for a configuration it rejects.
package modelio
