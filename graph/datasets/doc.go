// Package datasets loads graphs of your own (a node table and an edge
// list, [LoadFiles]) and fairness benchmark graphs (FairGNN's NBA and
// Pokec files, NIFTY's Bail, Credit and German files) and generates
// synthetic graphs whose sensitive homophily is set by a knob.
//
// # Loading
//
// Load(dir, name, opts) reads a preset: "nba", "pokec_z", "pokec_n"
// (FairGNN format) or "bail", "credit", "german" (NIFTY format). dir is
// the folder holding the files ($FAIRMP_DATA/nba) or its parent
// ($FAIRMP_DATA), which then must hold a folder named after the preset
// (or, for the Pokec presets, FairGNN's shared folder pokec/).
// For other files or columns, start from [FairGNNPreset] or [NIFTYPreset],
// change the config and call [LoadFairGNN] or [LoadNIFTY].
//
// # Your own files
//
// LoadFiles reads a graph of your own ([FilesConfig], [DefaultFilesConfig]):
//
//   - The node table: one row per node after a header line of column
//     names; comma-separated, or tab-separated for .tsv and .tab files or
//     a header with tabs and no comma (FilesConfig.Comma to force ',',
//     tab, ';' or '|'); RFC 4180 quoting. Or a Parquet file (a name
//     ending in .parquet, or FilesConfig.NodesFormat): flat columns of
//     numbers, text or booleans, a null being an empty cell; every cell
//     then goes through the same checks as a CSV cell. Nodes are known by
//     the id column (FilesConfig.IDColumn: any text, unique, non-empty)
//     or, with none, by their 0-based row in file order.
//   - The label column: any values, text or numbers; the distinct known
//     values become classes 0, 1, ... in sorted order (numeric order when
//     all are numbers). FilesConfig.Classes (default 2) is how many there
//     must be: a stray third value is an error listing every value, its
//     rows and its first line. Of two values, FilesConfig.PositiveLabel
//     becomes class 1, the class whose selection rate ΔDP compares; left
//     empty, the positive class is read only from 0/1, false/true and
//     no/yes (1, true, yes; any case) and never guessed otherwise
//     (approved/denied is an error asking for it). Cells in
//     FilesConfig.Missing (default: empty, NA, N/A, NaN, null, None, ?)
//     are unlabelled nodes: they take part in the graph, not in the split
//     or the metrics. [Dataset].ClassNames records the mapping.
//   - The sensitive column: any number of groups, text or numbers,
//     mapped to groups 0, 1, ... in the same sorted order
//     (Dataset.GroupNames); Missing values are unknown (−1). At least two
//     groups must be present. Several sensitive columns
//     ([Options].IntersectSens) make their intersections the groups; see
//     "Groups" below.
//   - Spellings: in the label and sensitive columns, numbers in any
//     spelling are one value ("1", "1.0"), but text that differs only in
//     case or spaces ("Yes", "yes ", "YES") is an error naming each
//     spelling, its rows and its first line, unless FilesConfig.FoldCase
//     makes them one value, named by the most frequent spelling (with a
//     warning). Guessing would be wrong either way: "Yes" and "YES" may be
//     one answer or two codes.
//   - Every other column is a numeric feature (finite; no empty cells),
//     min-max scaled to [−1, 1] unless MinMaxScale is off, except the
//     columns listed in Drop and the split column, and the columns listed
//     in FilesConfig.Categorical, which are one-hot encoded: a 0/1 column
//     "column=level" per level (sorted; a Missing cell is 0 in all), at
//     most FilesConfig.MaxLevels (50) levels. Categorical columns are
//     named, not detected: a numeric column with a stray text cell (a
//     typo, "n/a") would otherwise silently become hundreds of columns,
//     and the error for a text cell says how to name it. The levels are
//     part of the data set's [features.Schema], so a model file records
//     them and new data given that schema (FilesConfig.Schema) is encoded
//     with the same columns; a level the schema lacks is an error naming
//     file:line:column, the level and the known levels.
//   - Feature values: inf, NaN, +Inf and 1e400 are errors at their place.
//     Min-max scaling cannot overflow (0 to 1e308 becomes −1 to 1); a
//     range that overflows (−1e308 to 1e308) is an error. A value the model
//     sees unscaled (MinMaxScale off), or scaled by a model's schema, must
//     be within FilesConfig.FeatureLimit, the square root of the largest
//     float (FeatureLimit64 ≈ 1.34e154, the default; FeatureLimit32 ≈
//     1.84e19 for a model computing in float32), for the model's arithmetic
//     squares its inputs: 1e308 (1e39 in float32) is an error naming
//     file:line:column, where it used to give NaN after training.
//   - The edge list: one undirected edge per line, two node references
//     (ids, or 0-based rows without an id column) separated by spaces,
//     tabs or a comma; blank lines and lines starting with # are skipped;
//     a first line naming no node in both fields (without an id column:
//     holding no integer) is a header, skipped; a third numeric field (a
//     weight) is ignored, with a
//     warning: the graph is unweighted. The graph is undirected and
//     simple (graph.FromEdges): self-loops are dropped, and repeated
//     pairs and pairs listed in both directions ((a, b) and (b, a)) are
//     merged, with a warning counting each kind and the edges left; an
//     edge list of self-loops only is an error (the graph would have no
//     edge, and a graph model on it is an MLP). Or a Parquet file of two columns
//     (and an optional weight). Rows are integers in any notation: 838,
//     838.0, 8.38e+02 and numpy.savetxt's 8.380000000000000000e+02 are
//     row 838, while 838.5 is refused (one parser, shared with the
//     presets' edge files and the split files). An id that is not in the
//     id column as written but is an integral float whose integer form
//     is (numpy.savetxt of integer ids) names that node, with a warning
//     counting such references: the integer form is the only id it can
//     mean, and the ids written verbatim are always tried first.
//   - The split, optional: a column of the node table
//     (FilesConfig.SplitColumn) holding train, val (valid, validation) or
//     test, in any case, or a Missing value (the empty cell, NA, ...) for
//     a node in no list; any other value ("vla") is an error at its first
//     cell listing the accepted values and the values found, with their
//     rows and first lines, as for labels. Or a file in split.json's format (FilesConfig.Split,
//     below; indices in any integral notation); without either,
//     [RandomSplit] over the labelled nodes. Only labelled nodes may be
//     listed.
//
// The limits and the file:line:column errors below apply to these files
// as to the presets'.
//
// # The presets' protocol
//
// The protocol of the FMP paper (and of FairGNN and NIFTY) is applied:
// labels < 0 are unknown (−1), labels > 1 become 1; sensitive values < 0
// are unknown, and with [Options].FoldSens ([PaperOptions], what the lab's
// experiments use) values > 0 become group 1, while by default every
// distinct value is a group of its own (the published data sets' attributes
// are binary, so both give the same groups on them); the features are
// every column except the id,
// the label, the sensitive column (unless [Options].IncludeSens) and the
// configured drops, optionally min-max scaled to [−1, 1] (on for every
// preset but Pokec). User ids are parsed as exact integers (NBA and Pokec
// ids exceed 2^53). Rows are nodes, in file order.
//
// A NIFTY data set without its edges file gets NIFTY's feature-similarity
// graph (similarityEdges): it reproduces the shipped bail_edges.txt and
// credit_edges.txt exactly, in seconds.
//
// The split comes from split.json in the data set's folder
// ({"train": [...], "val": [...], "test": [...]}, 0-based rows of labelled
// nodes; val may be the same list as test, as in NBA), otherwise it is
// drawn with Options.SplitFractions and Options.SplitSeed: within each
// sensitive group and label (StratifiedSplit) by default, over all the
// labelled nodes (RandomSplit) with PaperOptions.
//
// # Groups
//
// Every loader keeps every sensitive group unless asked to fold
// (Options.FoldSens, presets only). [Options].IntersectSens names further
// sensitive columns: the groups become the combinations of values that
// occur ([Intersect]), named "col=value & col=value", and those columns
// leave the features. Options.MinGroupSize refuses groups with fewer
// labelled nodes ([*SmallGroupError], which names them and their sizes),
// or with Options.MergeSmallGroups merges them into one group "other"
// (with a warning listing them).
//
// # Synthetic graphs
//
// Synthetic draws a graph of two sensitive groups, or of any number with
// SyntheticConfig.GroupFracs, and a binary label, or one of any number of
// classes with SyntheticConfig.Classes (each class's rate differing
// between the groups by its own knob, ClassBias), from a stochastic block
// model with separate label- and sensitive-homophily knobs, labels
// correlated with the group, and features carrying label signal, group
// signal and noise (see [SyntheticConfig]). The binary graphs are drawn
// as they were before Classes existed, digit for digit. With the defaults (sensitive homophily 0.9),
// propagation over the graph raises the demographic-parity gap of a
// classifier well above that of a classifier on the features alone, the
// FMP paper's observation. [PokecZShape] gives a Pokec-z-sized graph for
// speed work. Generation is O(nodes·features + edges) and seeded.
//
// [SyntheticLarge] draws the same model for graphs too large for an edge
// list (10 million nodes and 100 million edges in about 3.5 minutes and
// 1.6 GB on two cores): the edges go straight into compressed rows
// (graph.FromCSR) and the features into a file of package graph/features,
// for mini-batch training (package layers/minibatch).
//
// # Limits
//
// Loaders stream their files: memory is bounded by the parsed data, not
// by the file. A table row (one CSV record, quoted line breaks included)
// and an edge line may be at most 1 MiB, a split file at most 64 bytes per
// node plus 1 MiB; longer input is an error, whatever it holds. A file
// whose first 8 KiB hold a NUL byte or invalid UTF-8 is refused as
// "binary or not UTF-8 text". A UTF-8 byte-order mark is accepted at the
// start of every file. Quoted cells in messages are cut to 64 bytes.
//
// A Parquet file is read with github.com/parquet-go/parquet-go, one row
// group at a time: its footer may take at most 64 MiB (checked before the
// library reads it), each row group at most 1 GiB uncompressed as its
// metadata declares, a cell at most 1 MiB, and nested or repeated columns
// are refused. On Bail (18,876 nodes, 403,977 edge lines), a load takes
// at best 115 ms and 56 MB peak from CSV (5.2 MB of files), 129 ms and
// 60–63 MB from snappy Parquet (2.0 MB), and 276 ms from numpy.savetxt's
// float edges (20 MB): Parquet is smaller on disk, not faster to load
// (examples/paper/owndata).
//
// # Errors and warnings
//
// Every bad input is an error, never a panic. Problems in files are
// *FileError values whose message reads "file:line:column: what was
// wrong, what was expected" (line or column left out when they do not
// apply; for a Parquet file, which has no lines, "file: row R, column C:
// ..." with FileError.Rows set): a missing file (wrapping fs.ErrNotExist), a binary file, a row
// or line over the limit, a missing column (listing those present), an
// empty file or header-only file, a non-numeric, empty or non-finite
// cell, a ragged row, a repeated user id, a sensitive column whose known
// values all fall in one group, an edge file without any edge, an edge
// naming an unknown user id or a row out of range, a split index out of
// range, of an unlabelled node, or in two lists, and a split whose train
// or test list is empty (val may be empty). Invalid configs
// (SyntheticConfig, Options, a threshold) are reported by their Validate
// methods or the loaders, naming the field.
//
// What a loader accepts but a careful user should know is listed in
// Dataset.Warnings, which the examples print: labels above 1 folded into
// label 1 and sensitive values above 0 other than 1 folded into group 1
// (the presets' protocol, with the values and row counts), small groups
// merged, self-loops dropped and repeated edges merged from a user's edge
// list (with their counts), and an edge
// file whose last line has no newline (a file cut mid-number would still
// parse, with a wrong last edge).
//
// The CSV, edge-file and split.json parsers, and whole loads from files,
// are fuzz-tested. Panics are for programmer errors only, as in package
// graph (see its "Errors and panics").
package datasets
