package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/fairmp/fairmp/fmp/modelio"
	"github.com/fairmp/fairmp/fmp/score"
)

// readHeader reads and verifies the whole -model file (modelio.Read:
// the checksum, with -trusted-keys the signature, the configuration
// against the parameters; memory bounded by what the configuration
// implies) and returns its header and its node record (nil without
// one): a damaged file is reported as damaged before its schema decides
// how the node table is read.
func readHeader(path string, keys []ed25519.PublicKey) (*modelio.Header, *modelio.Nodes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, inputError{fmt.Errorf("-model: %w", err)}
	}
	defer f.Close()
	mf, err := modelio.Read(f, keys...)
	if err != nil {
		return nil, nil, modelError(path, err)
	}
	return mf.Header, mf.Nodes, nil
}

// modelError is err, from loading the -model file path, as the command
// reports it (exit status 2).
func modelError(path string, err error) error {
	if errors.Is(err, modelio.ErrSignature) {
		return inputError{fmt.Errorf("-model %s: %w: -trusted-keys lists the keys a model file must be signed by (sign it with modelio.SaveConfig.SigningKey, or leave -trusted-keys out for a file you trust)", path, err)}
	}
	return inFlags(inputError{fmt.Errorf("-model %s: %w", path, err)})
}

// warnModel refuses, or warns of, what the -model file path cannot
// check. A file without a feature schema (modelio.Save's) would be read
// by column position, and a table with its columns in another order
// scores without an error (91.4% → 58.8% accuracy in issue 53): refused
// unless trust (-trust-column-order) vouches for the order, then warned
// of. One without an attribute fingerprint cannot tell another -sens:
// warned of.
func warnModel(stderr io.Writer, path string, h *modelio.Header, trust bool) error {
	if h.Features == nil && !trust {
		return inputError{fmt.Errorf("-model %s records no feature schema, so nothing can check that the node table's feature columns are in the order (and scaling) the model was trained with, and another order gives other predictions without an error: save the model with its schema (modelio.SaveConfig.Features; the model.fmp debias writes has it), or give -trust-column-order if the table's columns are in the model's order", path)}
	}
	if h.Features == nil {
		fmt.Fprintf(stderr, "warning: -model %s records no feature schema: the node table's feature columns are read by position, in the table's order, as -trust-column-order vouches\n", path)
	}
	if h.Sens == nil {
		fmt.Fprintf(stderr, "warning: -model %s records no fingerprint of the sensitive attribute: nothing can check that -sens is the attribute the model was trained or debiased with; the fairness figures are for the -sens given\n", path)
	}
	return nil
}

// nonFinite returns how many of p are NaN or ±Inf, and the first one's
// index.
func nonFinite(p []float64) (int, int) {
	n, first := 0, -1
	for i, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if n == 0 {
				first = i
			}
			n++
		}
	}
	return n, first
}

// fmpOnGraph says, for an fmp model file, what FMP means on another
// graph; nothing for other kinds.
func fmpOnGraph(h *modelio.Header, s score.Semantics) string {
	if h.Kind != "fmp" {
		return ""
	}
	return "; " + fmpScoringWords(s)
}

// fmpScoringWords says what -fmp-scoring s means for an fmp model on a
// graph other than its training graph (stderr and report.html).
func fmpScoringWords(s score.Semantics) string {
	if s == score.Fitted {
		return "FMP applies the duals it chose on the training graph (-fmp-scoring fitted): a node's score depends on its neighbourhood only, and the nodes it saw keep their scores where their neighbourhood did not change"
	}
	return "FMP pushes together the groups' mean predictions over this graph's nodes, the new ones included (-fmp-scoring recompute): every score may move"
}
