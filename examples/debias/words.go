package main

import (
	"errors"
	"strings"
)

// flagWords puts the library's vocabulary into the command's: the
// loader's FilesConfig fields and modelio's Env fields become the flags
// that set them. Longer names come first.
var flagWords = strings.NewReplacer(
	"FilesConfig.IDColumn", "-id",
	"FilesConfig.LabelColumn", "-label",
	"FilesConfig.SensColumn", "-sens",
	"FilesConfig.SplitColumn", "-split-column",
	"FilesConfig.Split", "-split",
	"FilesConfig.Drop", "-drop",
	"FilesConfig.Comma", "-comma",
	"FilesConfig.PositiveLabel", "-positive",
	"FilesConfig.FoldCase", "-fold-case",
	"FilesConfig.Categorical", "-categorical",
	"FilesConfig.MaxLevels", "-max-levels",
	"unknown (Missing)", "unknown (-missing)",
	"Categorical[", "-categorical[",
	"FilesConfig.Classes", "-classes",
	"FilesConfig.Missing", "-missing",
	"FilesConfig.Options.SplitFractions", "-split-fractions",
	"FilesConfig.Options.IncludeSens", "-include-sens",
	"FilesConfig.NodesFormat", "-nodes-format",
	"FilesConfig.EdgesFormat", "-edges-format",
	"read it with the parquet format", "read it with -nodes-format or -edges-format parquet",
	"read with the csv format", "read with -nodes-format or -edges-format csv",
	"turn on min-max scaling (FilesConfig.MinMaxScale)", "leave out -no-scale to min-max scale the features,",
	"(FilesConfig.FeatureLimit)", "(-dtype)",
	"FilesConfig.Nodes", "-nodes",
	"FilesConfig.Edges", "-edges",
	"FilesConfig", "the input flags",
	"and SensColumn", "and -sens",
	"and SplitColumn", "and -split-column",
	"and LabelColumn", "and -label",
	"(IDColumn)", "(-id)",
	"(Options.MinGroupSize)", "(-min-group)",
	"(Options.MergeSmallGroups)", "(-merge-small)",
	"Options.MinGroupSize", "-min-group",
	"list text columns in Drop", "leave text columns out with -drop",
	"leave them out (Drop)", "leave them out with -drop",
	"set Comma)", "set -comma)",
	"a higher learning rate", "a higher learning rate (-lr)",
	"under a ΔDP bound", "under a ΔDP bound (-bound)",
	"out of the features (Drop)", "out of the features (-drop)",
	"(Env.SameGraph asks for the saved graph)", "(-same-graph asks for the graph the model was saved for)",
	"Env.Sens", "the -sens column",
	"Env.Graph", "the graph of -edges",
)

// flagError is an error told in the command's words; it unwraps to the
// library's error, so errors.Is still finds the sentinels.
type flagError struct {
	msg string
	err error
}

func (e flagError) Error() string { return e.msg }
func (e flagError) Unwrap() error { return e.err }

// inFlags returns err told with the command's flags (see flagWords),
// keeping it an input error when it was one.
func inFlags(err error) error {
	if err == nil {
		return nil
	}
	msg := flagWords.Replace(err.Error())
	if msg == err.Error() {
		return err
	}
	var ie inputError
	if errors.As(err, &ie) {
		return inputError{flagError{msg: msg, err: ie.err}}
	}
	return flagError{msg: msg, err: err}
}
