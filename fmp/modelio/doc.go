// Package modelio saves and loads fairmp models.
//
// [Save] writes a model's kind, configuration and parameters; [Load]
// rebuilds the model in a gorgonia graph from that file (see [FormatName]
// for the format). Both go through the registry of model kinds in package
// layers ([layers.Declare]): every kind declared there, the library's
// and the user's own, saves and loads with no code here. The kinds of
// package layers (mlp, gcn, sgc, appnp, gat, jknet, sage, gin), fmp's wrapper kind
// and layers/fairtrain's encoder (what FairGNN, NIFTY and FairVGNN
// train) are always known: a program that only loads a model file
// imports this package alone. A kind of the user's own is known once the package
// that declares it is imported. [Read]
// returns a file's kind, configuration and parameters without building
// anything, for a program that runs the model by itself (packages
// fmp/fmpbeam, on Apache Beam, and fmp/score, on new nodes, do); it
// checks everything Load checks before building.
//
//	f, err := os.Open("model.fmp")
//	if err != nil { ... }
//	defer f.Close()
//	m, err := modelio.Load(f, g, modelio.Env{Graph: ds.Graph, Phase: task.Phase, Sens: ds.Sens})
//	if err != nil { ... }
//	pred, err := train.Predict(m, task, nil)
//
// [Save] also records the feature schema the model was trained on
// ([features.Schema]: column names, order, scaling) and the model's
// decisions on its validation nodes ([metrics.Baseline], what drift is
// measured against), and can sign the file; [ReadHeader] reads a file's
// header alone (kind, dtype, graph, schema, baseline), to load new data
// the model's way before loading the model (datasets.FilesConfig.Schema).
// An fmp model's file also keeps the duals FMP fitted on its graph
// (fmp.Model.Record), which package fmp/score applies to new nodes;
// [File.Backbone] builds a file's backbone for programs that run it
// themselves.
//
// # What is guaranteed
//
// Loading a file from an untrusted source is bounded, in memory by what
// its configuration implies, never by what its header claims or by the
// file's size: the header line is read in at most 1 MiB and parsed
// strictly (every key exactly as Save writes it, no unknown key, no key
// twice at any level, no configuration key missing at any level: a
// missing one would silently be zero); the configuration is decoded and
// validated (step and layer counts are at most [layers.MaxSteps]) and
// the parameter names, shapes and sizes it builds ([layers.Kind.Params])
// are compared with the header's list before a byte of parameters is
// read; the parameters, at most [MaxParamBytes] (1 GiB), are then read
// and decoded in 64 KiB chunks as they arrive, hashed as they go, so a
// short file, a sparse file or an endless stream fails after reading at
// most what the configuration implies. Prediction time is then bounded by
// the model's parameters, its steps and the graph given.
//
// Nothing is interpreted before it is verified: when the header cannot be
// interpreted (an unknown key or kind, a configuration that does not
// build the listed parameters), the rest of the file is hashed without
// being kept (at most MaxParamBytes) to tell damage ([ErrCorrupt]) or a
// missing trusted signature ([ErrSignature]) from an intact file whose
// header is wrong (that error). Only the header's format name and version
// are read before (a file of another format or version has no checksum
// this release knows).
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
// itself is not in the file, Env.Sens gives it back. On the saved graph
// another attribute is an error saying what differs. Files of earlier
// format versions are refused ([ErrVersion]).
//
// # Any graph
//
// The graph is given when a model is loaded, not when it was saved: a
// trained model applies to any graph whose nodes have the features it
// was trained on (a grown graph, another region's, a subgraph), as
// PyG's model(x, edge_index). Give that graph as [Env].Graph, its
// sensitive attribute as Env.Sens; the saved fingerprint is then
// information ([ReadHeader]'s Graph). A caller that means to score the
// training graph and wants a wrong file caught sets Env.SameGraph. FMP's
// group means are taken over the nodes of the graph given.
//
// # Errors
//
// Save and Load return errors, never panic, on anything a file or a
// caller can cause. Load's errors wrap [ErrFormat], [ErrVersion],
// [ErrCorrupt], [ErrSignature], [ErrUnknownKind] or [ErrMismatch] (test
// with errors.Is), or the model constructor's error for a configuration
// it rejects.
package modelio
