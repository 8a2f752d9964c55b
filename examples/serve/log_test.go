package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acceptAll opens the service on log, sends reqs (each must be accepted
// or repeated) and closes it; it returns the answers and the log's size
// after each request.
func acceptAll(t *testing.T, f *fixture, log string, reqs [][]byte, extra ...string) ([]string, []int64, string) {
	t.Helper()
	s, srv, msg := f.open(t, log, extra...)
	defer stop(t, s, srv)
	var answers []string
	var sizes []int64
	for _, r := range reqs {
		status, b, _, err := post(srv.Client(), srv.URL, r)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, string(b))
		answers = append(answers, string(b))
		sizes = append(sizes, fileSize(t, log))
	}
	return answers, sizes, msg
}

// chain is k requests of two new nodes each, every request joined to the
// base graph and to the nodes of the one before.
func chain(f *fixture, k int, seed int64, prefix string) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	var out [][]byte
	prev := "n0"
	for i := 0; i < k; i++ {
		a, b := prefix+itoa(2*i), prefix+itoa(2*i+1)
		out = append(out, body(
			f.newNode(a, rng.Intn(1000), rng, prev, "n"+itoa(rng.Intn(1000))),
			f.newNode(b, rng.Intn(1000), rng, a, "n"+itoa(rng.Intn(1000)))))
		prev = b
	}
	return out
}

// TestRestartAndTornTail: a restart replays the log to the same answers
// (every request repeated answers the same bytes); a log cut inside its
// last record loses that record alone, says so, and the request sent
// again is scored as it was the first time; a tail of zeros is a torn
// record too; damage before the end is refused, naming the record. With
// either meaning of FMP; a log is replayed only with its own.
func TestRestartAndTornTail(t *testing.T) {
	for _, mode := range []string{"fitted", "frozen"} {
		t.Run(mode, func(t *testing.T) { restartAndTornTail(t, mode) })
	}
}

func restartAndTornTail(t *testing.T, mode string) {
	f := getFixture(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "serve.log")
	reqs := chain(f, 3, 1, "t")
	answers, sizes, _ := acceptAll(t, f, log, reqs, "-fmp", mode)

	o, err := parseFlags(f.args(log, "-fmp", map[string]string{"fitted": "frozen", "frozen": "fitted"}[mode]), &bytes.Buffer{})
	require.NoError(t, err)
	_, err = openService(context.Background(), o, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was written with -fmp "+mode)

	again, _, msg := acceptAll(t, f, log, reqs, "-fmp", mode)
	assert.Equal(t, answers, again, "replay gives every request its answer")
	assert.Empty(t, msg)

	// Cut the last record short: start-up drops it.
	require.NoError(t, os.Truncate(log, sizes[2]-5))
	s, srv, msg := f.open(t, log, "-fmp", mode)
	assert.Contains(t, msg, "dropped a torn last record")
	assert.Contains(t, msg, "the 2 records before it are replayed")
	assert.Equal(t, 4, s.st.accepted())
	assert.Equal(t, sizes[1], fileSize(t, log), "the torn record is cut off the file")
	status, b, repeat, err := post(srv.Client(), srv.URL, reqs[2])
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	assert.False(t, repeat, "the torn request was never accepted")
	assert.Equal(t, answers[2], string(b), "and scores as it did the first time")
	status, b, repeat, err = post(srv.Client(), srv.URL, reqs[0])
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, repeat)
	assert.Equal(t, answers[0], string(b))
	stop(t, s, srv)

	// A tail of zeros (a file system that extended the file but never
	// wrote it) is a torn record too.
	fh, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = fh.Write(make([]byte, 100))
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	s, srv, msg = f.open(t, log, "-fmp", mode)
	assert.Contains(t, msg, "dropped a torn last record (100 bytes")
	assert.Equal(t, 6, s.st.accepted())
	stop(t, s, srv)

	// A changed byte inside the first request's record, with records
	// after it, is damage.
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	at := bytes.Index(raw, []byte(`"id":"t0"`))
	require.Positive(t, at)
	raw[at+7] = 'X'
	require.NoError(t, os.WriteFile(log, raw, 0o644))
	o, err = parseFlags(f.args(log, "-fmp", mode), &bytes.Buffer{})
	require.NoError(t, err)
	_, err = openService(context.Background(), o, &bytes.Buffer{})
	require.Error(t, err)
	assert.ErrorAs(t, err, &inputError{})
	assert.Contains(t, err.Error(), "record 1 at byte")
	assert.Contains(t, err.Error(), "the log is damaged, not cut by a crash")
	assert.Contains(t, err.Error(), "nothing was replayed and the file is unchanged")
}

// TestLogRefused: a log is replayed only onto the model and base graph it
// was written for, by one process at a time, and a file that is not a
// log is never overwritten.
func TestLogRefused(t *testing.T) {
	f := getFixture(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "serve.log")
	acceptAll(t, f, log, chain(f, 1, 2, "r"))
	open := func(args []string) error {
		o, err := parseFlags(args, &bytes.Buffer{})
		require.NoError(t, err)
		s, err := openService(context.Background(), o, &bytes.Buffer{})
		if err == nil {
			s.close()
		}
		return err
	}
	other := *f
	other.model, other.keyFile = f.unsigned, ""
	err := open(other.args(log))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was written with another model file")

	s, srv, _ := f.open(t, log)
	err = open(f.args(log))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in use by another serve process")
	stop(t, s, srv)

	notLog := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notLog, []byte("my notes\n"), 0o644))
	err = open(f.args(notLog))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a serve log")
	b, _ := os.ReadFile(notLog)
	assert.Equal(t, "my notes\n", string(b))
}

// recordOffsets returns the byte offsets of a well-formed log's records,
// the header's first.
func recordOffsets(t *testing.T, raw []byte) []int {
	t.Helper()
	var out []int
	for o := len(journalMagic); o < len(raw); {
		require.GreaterOrEqual(t, len(raw)-o, 8)
		out = append(out, o)
		o += 8 + int(binary.LittleEndian.Uint32(raw[o:]))
	}
	return out
}

// TestLengthFlipRefused is the regression test of a flipped bit in a
// record's length field: it was taken for a torn tail (a length running
// past the end of the file), and every record from it on was cut off
// with exit status 0 and a message saying they were never answered; in
// the header record's length, the whole log was rewritten. Now each is
// refused with exit status 2 and the record's byte offset, and the file
// is left byte for byte as it was; a real torn tail still recovers.
func TestLengthFlipRefused(t *testing.T) {
	f := getFixture(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "serve.log")
	reqs := chain(f, 6, 5, "f")
	answers, _, _ := acceptAll(t, f, log, reqs)
	good, err := os.ReadFile(log)
	require.NoError(t, err)
	offs := recordOffsets(t, good)
	require.Len(t, offs, 7)

	flips := []struct {
		name   string
		record int // 0 is the header
		bit    uint
		msg    string
	}{
		{"middle record, high bit", 3, 30, "record 3 at byte"},
		{"middle record, low bit", 3, 9, "record 3 at byte"},
		{"header record", 0, 27, "its header record at byte 20 is damaged"},
		{"header record, low bit", 0, 10, "its header record at byte 20 is damaged"},
		{"last record", 6, 20, "its length field is damaged"},
		{"last record, shorter", 6, 2, "record 6 at byte"},
	}
	for _, c := range flips {
		t.Run(c.name, func(t *testing.T) {
			raw := bytes.Clone(good)
			o := offs[c.record]
			binary.LittleEndian.PutUint32(raw[o:], binary.LittleEndian.Uint32(raw[o:])^(1<<c.bit))
			require.NoError(t, os.WriteFile(log, raw, 0o644))
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // a service that starts stops at once, exit status 0
			code := run(ctx, f.args(log, "-addr", "127.0.0.1:0"), &stdout, &stderr)
			assert.Equal(t, 2, code, stderr.String())
			assert.Contains(t, stderr.String(), c.msg)
			assert.Contains(t, stderr.String(), fmt.Sprintf("byte %d", o))
			assert.Contains(t, stderr.String(), "Restore")
			assert.NotContains(t, stderr.String(), "dropped")
			after, err := os.ReadFile(log)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(raw, after), "the log is left byte for byte as it was")
		})
	}

	// A real torn tail: the last record cut short, or its prefix alone,
	// or part of its prefix; all recover the records before it.
	for _, cut := range []int{len(good) - 1, offs[6] + 8, offs[6] + 3} {
		require.NoError(t, os.WriteFile(log, good[:cut], 0o644))
		s, srv, msg := f.open(t, log)
		assert.Contains(t, msg, "dropped a torn last record")
		assert.Equal(t, 10, s.st.accepted())
		assert.Equal(t, int64(offs[6]), fileSize(t, log))
		status, b, repeat, err := post(srv.Client(), srv.URL, reqs[5])
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, status)
		assert.False(t, repeat)
		assert.Equal(t, answers[5], string(b))
		stop(t, s, srv)
	}
	// A header cut by a crash while the log was created, nothing after
	// it: the log is created again.
	require.NoError(t, os.WriteFile(log, good[:offs[1]-3], 0o644))
	s, srv, _ := f.open(t, log)
	assert.Equal(t, 0, s.st.accepted())
	stop(t, s, srv)
	assert.Equal(t, int64(offs[1]), fileSize(t, log))
}
