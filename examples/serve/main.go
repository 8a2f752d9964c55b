// Command serve is a small scoring service for a saved fair model: it
// keeps a graph in memory (a base graph read from files), adds the nodes
// each request brings, and answers their probabilities and decisions,
// with every accepted request appended to a log and fsynced before it is
// answered. It uses the standard library's net/http and package
// fmp/score, which scores new nodes on their receptive field with the
// duals FMP fitted on the training graph (-fmp fitted), or from their
// neighbours' FMP states frozen at start-up (-fmp frozen).
//
//	go run ./examples/serve -model out/model.fmp -nodes syn/nodes.csv \
//	    -edges syn/edges.csv -id node -label label -sens group \
//	    -split-column split -log serve.log
//
// Endpoints:
//
//	POST /score  {"nodes":[{"id":"a","features":{"x0":0.1,...},"group":"1","edges":["n17","b"]}, ...]}
//	             → {"nodes":[{"id":"a","probability":0.73,"decision":1}, ...]}
//	GET  /stats  per-group decision rates of the accepted nodes, drift from
//	             the model file's baseline
//
// Ids: a base-graph node is known by its -id column's value, or without
// -id by its 0-based row in the node table as a decimal string ("0",
// "1", ...); a new node by the id its request gives, which must be new.
// Features are the node table's raw values (numbers; a categorical
// column's level as a string), scaled with the model file's schema.
//
// Guarantees: a request is checked whole before anything is kept (a 4xx
// naming the field otherwise, and nothing logged); an accepted request is
// one record of the log, written and fsynced before the answer; at
// start-up the log is replayed onto the base graph, a torn last record
// (a crash mid-write) dropped and reported. Answers do not depend on
// timing: each request is scored on the graph as the requests before it
// in the log left it, so replay recomputes the same answers, and
// repeating an accepted request (every node id and content the same)
// answers again what was answered (header Serve-Repeat: true, nothing
// logged); reusing an id with other content is a 409. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fairmp/fairmp/internal/blas"
)

func main() {
	blas.Default()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command, until ctx is done; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = serve(ctx, o, stdout, stderr)
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "serve:", err)
	var ie inputError
	if errors.As(err, &ie) {
		return 2
	}
	return 1
}

func serve(ctx context.Context, o *options, stdout, stderr io.Writer) error {
	// Bind first: a busy -addr is found before the log is created or
	// replayed. Connections made meanwhile wait in the listen queue.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return badInput("-addr %s: %v", o.addr, err)
	}
	s, err := openService(ctx, o, stderr)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{}
	s.configure(srv)
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(newClientLimit(ln, o.maxConns)) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	return err
}
