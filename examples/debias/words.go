package main

import (
	"errors"

	"github.com/fairmp/fairmp/internal/cli"
)

// flagWords puts the library's vocabulary into the command's: the
// loader's FilesConfig fields and modelio's Env fields become the flags
// that set them. The node-table flags' words are cli.FlagWords's; the
// pairs here are for debias's own flags (cli.FlagWords tries longer
// names first, so "FilesConfig.Split" leaves "FilesConfig.SplitColumn"
// to -split-column).
var flagWords = cli.FlagWords(
	"FilesConfig.Split", "-split",
	"FilesConfig.Comma", "-comma",
	"FilesConfig.Categorical", "-categorical",
	"FilesConfig.MaxLevels", "-max-levels",
	"Categorical[", "-categorical[",
	"FilesConfig.Options.SplitFractions", "-split-fractions",
	"FilesConfig.Options.IncludeSens", "-include-sens",
	"FilesConfig.NodesFormat", "-nodes-format",
	"FilesConfig.EdgesFormat", "-edges-format",
	"read it with the parquet format", "read it with -nodes-format or -edges-format parquet",
	"read with the csv format", "read with -nodes-format or -edges-format csv",
	"turn on min-max scaling (FilesConfig.MinMaxScale)", "leave out -no-scale to min-max scale the features,",
	"(FilesConfig.FeatureLimit)", "(-dtype)",
	"(Options.MinGroupSize)", "(-min-group)",
	"(Options.MergeSmallGroups)", "(-merge-small)",
	"Options.MinGroupSize", "-min-group",
	"set Comma)", "set -comma)",
	"a higher learning rate", "a higher learning rate (-lr)",
	"under a ΔDP bound", "under a ΔDP bound (-bound)",
	"or merge small groups", "or merge small groups (-merge-small with a -min-group above their size)",
	"(a split drawn within each group and class does)", "(the split debias draws without -split or -split-column does: it is drawn within each group and class)",
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
