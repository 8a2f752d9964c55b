package main

import (
	"crypto/ed25519"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/fairmp/fairmp/graph/datasets"
	"github.com/fairmp/fairmp/internal/cli"
)

// options are the command's flags, checked.
type options struct {
	model        string              // -model
	trustedFiles string              // -trusted-keys
	trustedKeys  []ed25519.PublicKey // read from -trusted-keys
	files        datasets.FilesConfig
	log          string        // -log
	addr         string        // -addr
	maxBody      int64         // -max-body
	maxNodes     int           // -max-nodes
	maxEdges     int           // -max-edges
	rangeFactor  float64       // -feature-range-factor
	maxPending   int           // -max-pending
	maxConns     int           // -max-conns-per-client
	bodyTimeout  time.Duration // -body-timeout
	fmp          string        // -fmp
	quiet        bool          // -q
}

// defaultMaxEdges is -max-edges' default: see README.md ("Caps") for
// what a request of that many edges costs.
const defaultMaxEdges = 4096

// defaultRangeFactor is -feature-range-factor's default.
const defaultRangeFactor = 3

// inputError marks an error caused by the command's input (flags, files,
// the model file, the log): exit status 2.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func badInput(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

const usage = `serve scores new nodes of a graph with a saved fair model, over HTTP.

  serve -model FILE -nodes FILE -edges FILE -label COL -sens COL [-id COL] -log FILE [flags]

The base graph (-nodes, -edges: the node table and edge list debias reads
and -export writes) is read with the model file's feature schema, so that
columns and scaling are the model's. POST /score adds nodes and edges to it
and answers each new node's probability and decision; GET /stats gives the
per-group decision rates of every accepted node and their drift from the
model file's baseline. Every accepted request is appended to -log and
fsynced before it is answered; at start-up the log is replayed onto the
base graph, so a restart (even after kill -9) loses nothing answered.

Exit status 2 for bad input (flags, files, a damaged log), 1 for a failure.

Flags:
`

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	def := datasets.DefaultFilesConfig()
	t := cli.NodeTable{Required: true}
	t.Register(fs, def)
	fs.StringVar(&o.model, "model", "", "the saved model (debias's model.fmp, package fmp/modelio); it must record its feature schema (required)")
	fs.StringVar(&o.trustedFiles, "trusted-keys", "", "load -model only if it is signed by one of these ed25519 public keys (FILE[,FILE...], each 64 hex digits)")
	fs.StringVar(&o.log, "log", "", "the accepted-node log: created if absent, replayed at start-up, appended to (required)")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	fs.Int64Var(&o.maxBody, "max-body", 1<<20, "largest request body in bytes")
	fs.IntVar(&o.maxNodes, "max-nodes", 1000, "most nodes in one request")
	fs.IntVar(&o.maxEdges, "max-edges", defaultMaxEdges, "most edges in one request, its nodes' edges lists together: a request's scoring work grows with them, and it holds the single writer (more: split the request)")
	fs.Float64Var(&o.rangeFactor, "feature-range-factor", defaultRangeFactor, "refuse a numeric feature outside this many times its training range (the model file's min-max scaling), stretched about the range's centre: 1 is the training range itself, 3 adds its width on each side; 0 takes every finite value (and is needed for a model file that records no range)")
	fs.IntVar(&o.maxPending, "max-pending", 64, "most requests parsed and waiting for the writer at once (a body is read before it takes a slot); more wait")
	fs.IntVar(&o.maxConns, "max-conns-per-client", 32, "most connections one client (a remote IP address; behind a proxy, the proxy) may hold open at once; more are answered 429. Each reads a body of up to -max-body bytes")
	fs.DurationVar(&o.bodyTimeout, "body-timeout", 10*time.Second, "most time a request's body may take to arrive, from the request's start; slower is answered 408")
	fs.StringVar(&o.fmp, "fmp", "fitted", "what FMP means for new nodes: fitted (the duals fitted on the training graph, on each new node's receptive field: hops + K + 1 hops of the grown graph) or frozen (the base graph's FMP states frozen at start-up; a new node costs its neighbourhood, but every request rebuilds the whole graph's rows); see package fmp/score")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, err
		}
		return nil, inputError{err}
	}
	if fs.NArg() > 0 {
		return nil, badInput("unexpected arguments %q (flags go before them? every input is a flag)", fs.Args())
	}
	switch {
	case o.model == "":
		return nil, badInput("-model is required: the saved model file that scores the nodes")
	case t.Nodes == "" || t.Edges == "":
		return nil, badInput("-nodes and -edges are required: the base graph's node table and edge list")
	case t.Label == "" || t.Sens == "":
		return nil, badInput("-label and -sens are required: the node table's label and sensitive columns")
	case o.log == "":
		return nil, badInput("-log is required: the file every accepted request is appended to (created if absent)")
	case o.maxBody < 64 || o.maxBody > 64<<20:
		return nil, badInput("-max-body %d, want 64 bytes to 64 MiB (%d)", o.maxBody, 64<<20)
	case o.maxNodes < 1:
		return nil, badInput("-max-nodes %d, want at least 1", o.maxNodes)
	case !(o.rangeFactor == 0 || o.rangeFactor >= 1) || math.IsInf(o.rangeFactor, 0):
		return nil, badInput("-feature-range-factor %v, want 0 (no check) or a finite number ≥ 1 (1: the training range itself)", o.rangeFactor)
	case o.maxEdges < 1:
		return nil, badInput("-max-edges %d, want at least 1", o.maxEdges)
	case o.maxConns < 1:
		return nil, badInput("-max-conns-per-client %d, want at least 1", o.maxConns)
	case o.bodyTimeout <= 0:
		return nil, badInput("-body-timeout %v, want a positive duration (10s)", o.bodyTimeout)
	case o.maxPending < 1:
		return nil, badInput("-max-pending %d, want at least 1", o.maxPending)
	case o.fmp != "fitted" && o.fmp != "frozen":
		return nil, badInput("-fmp %q, want fitted or frozen", o.fmp)
	case t.Classes < 0:
		return nil, badInput("-classes %d, want ≥ 0", t.Classes)
	}
	var err error
	if o.files, err = t.Files(def); err != nil {
		return nil, inputError{err}
	}
	if err := o.files.Validate(); err != nil {
		return nil, badInput("%s", flagWords.Replace(err.Error()))
	}
	if o.trustedFiles != "" {
		keys, err := readTrustedKeys(o.trustedFiles)
		if err != nil {
			return nil, err
		}
		o.trustedKeys = keys
	}
	return o, nil
}

// flagWords puts the loader's vocabulary (FilesConfig's fields) into the
// command's flags: serve's input flags are cli.NodeTable's alone.
var flagWords = cli.FlagWords()

// readTrustedKeys reads -trusted-keys (cli.TrustedKeys) as bad input.
func readTrustedKeys(list string) ([]ed25519.PublicKey, error) {
	keys, err := cli.TrustedKeys(list)
	if err != nil {
		return nil, badInput("%v", err)
	}
	return keys, nil
}
