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
//	m, err := modelio.Load(f, g, modelio.Env{Graph: ds.Graph, Phase: task.Phase, Sens: ds.Sens})
//	if err != nil { ... }
//	pred, err := train.Predict(m, task, nil)
//
// [SaveWith] also records the feature schema the model was trained on
// ([features.Schema]: column names, order, scaling) and can sign the
// file; [ReadHeader] reads a file's header alone (kind, dtype, graph,
// schema), to load new data the model's way before loading the model
// (datasets.FilesConfig.Schema).
//
// # What is guaranteed
//
// Loading a file from an untrusted source is bounded: the header line is
// read in at most 1 MiB; the parameters are read as they come, so memory
// grows with the bytes the file really holds, not with what its header
// announces; the configuration is decoded strictly and validated (step
// and layer counts are at most [layers.MaxSteps]), and the parameter
// names and shapes it would build ([layers.Kind.Params]) are compared
// with the file's before anything is built. Prediction time is then
// bounded by the model's parameters, its steps and the graph given.
//
// A model file ends with a SHA-256 checksum of its header and
// parameters: truncation and any changed byte are detected before Load
// adds anything to the gorgonia graph. The checksum detects accidents,
// not edits: anyone can recompute it. For files that come from elsewhere,
// sign them ([SaveConfig].SigningKey, ed25519) and load them with
// [Env].TrustedKeys: a file not signed by one of the keys is refused
// ([ErrSignature]), and any change to a signed file breaks its
// signature. Non-finite parameters are refused when saving and when
// loading. The file records a fingerprint of the graph a graph model was
// built on (nodes, edges and structure, graph.Graph.Fingerprint) and of
// the sensitive attribute of a model that uses one (fmp's); the attribute
// itself is not in the file, Env.Sens gives it back, and loading onto
// another graph or with another attribute is an error saying what
// differs. Files of earlier format versions are refused ([ErrVersion]).
//
// # Errors
//
// Save and Load return errors, never panic, on anything a file or a
// caller can cause. Load's errors wrap [ErrFormat], [ErrVersion],
// [ErrCorrupt], [ErrSignature], [ErrUnknownKind] or [ErrMismatch] (test
// with errors.Is), or the model constructor's error for a configuration
// it rejects.
package modelio
