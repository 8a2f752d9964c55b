package main

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stretchr/testify/assert"
)

// TestStartErrors: what stops the command before it serves is exit
// status 2 with a message naming the flag (or file) at fault.
func TestStartErrors(t *testing.T) {
	f := getFixture(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "serve.log")
	without := func(flag string) []string {
		var out []string
		args := f.args(log)
		for i := 0; i < len(args); i++ {
			if args[i] == flag {
				i++
				continue
			}
			out = append(out, args[i])
		}
		return out
	}
	with := func(flag, value string) []string {
		args := f.args(log)
		for i := range args {
			if args[i] == flag {
				args[i+1] = value
				return args
			}
		}
		return append(args, flag, value)
	}
	bare := *f
	bare.model, bare.keyFile = f.noSchema, ""
	noSchema := bare.args(log)
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"no model", without("-model"), "-model is required"},
		{"no log", without("-log"), "-log is required"},
		{"no nodes", without("-nodes"), "-nodes and -edges are required"},
		{"no sens", without("-sens"), "-label and -sens are required"},
		{"max nodes", with("-max-nodes", "0"), "-max-nodes 0, want at least 1"},
		{"max body", with("-max-body", "10"), "-max-body 10, want 64 bytes to 64 MiB"},
		{"two sens", with("-sens", "group,label"), "-sens \"group,label\": serve takes one sensitive column"},
		{"an argument", append(f.args(log), "extra"), "unexpected arguments"},
		{"untrusted signer", with("-trusted-keys", f.otherKey), "-trusted-keys lists the keys a model file must be signed by"},
		{"unsigned", with("-model", f.unsigned), "-trusted-keys lists the keys a model file must be signed by"},
		{"no schema", noSchema, "records no feature schema"},
		{"missing node table", with("-nodes", filepath.Join(dir, "none.csv")), "none.csv"},
		{"unknown label column", with("-label", "outcome"), "outcome"},
		{"bad key file", with("-trusted-keys", f.nodes), "-trusted-keys " + f.nodes},
		{"bad address", with("-addr", "127.0.0.1:99999"), "-addr 127.0.0.1:99999"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), c.args, &stdout, &stderr)
			assert.Equal(t, 2, code, stderr.String())
			assert.Contains(t, stderr.String(), c.msg)
			assert.Empty(t, stdout.String())
		})
	}
}

// TestBusyAddrBeforeLog is the regression test of a busy -addr found
// only after the log was created (or replayed): the address is bound
// first, so that the command stops before it touches -log.
func TestBusyAddrBeforeLog(t *testing.T) {
	f := getFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	log := filepath.Join(t.TempDir(), "serve.log")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), f.args(log, "-addr", ln.Addr().String()), &stdout, &stderr)
	assert.Equal(t, 2, code, stderr.String())
	assert.Contains(t, stderr.String(), "-addr "+ln.Addr().String())
	assert.NoFileExists(t, log, "the log is not created when the address is busy")
}
