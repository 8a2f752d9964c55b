package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKillRestart runs the command as a child process, sends requests
// from several clients and kills the process with SIGKILL in the middle
// of the stream, several times, restarting it on the same log each
// time. Every request that was answered 200 must be in the replayed
// state, and asking it again must answer the same bytes (a repeat);
// a request that got no answer may or may not have been accepted, but
// sending it again is never a conflict.
func TestKillRestart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL")
	}
	for _, mode := range []string{"fitted", "frozen"} {
		t.Run(mode, func(t *testing.T) { killRestart(t, mode) })
	}
}

func killRestart(t *testing.T, mode string) {
	f := getFixture(t)
	log := filepath.Join(t.TempDir(), "serve.log")
	type sent struct {
		body   []byte
		answer string
		nodes  int
	}
	var (
		mu       sync.Mutex
		answered []sent   // answered 200 as new
		unsure   [][]byte // no answer: the process died under them
		accepted []string // ids of answered nodes, for edges
		torn     int
	)
	rng := rand.New(rand.NewSource(7))
	const kills, clients = 6, 4
	for round := 0; round < kills; round++ {
		p := startProc(t, f.args(log, "-fmp", mode)...)
		if strings.Contains(p.errText(), "dropped a torn last record") {
			torn++
		}
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(c int, seed int64) {
				defer wg.Done()
				rng := rand.New(rand.NewSource(seed))
				hc := &http.Client{Timeout: 10 * time.Second}
				for i := 0; ; i++ {
					k := 1 + rng.Intn(3)
					var nodes []map[string]any
					mu.Lock()
					for j := 0; j < k; j++ {
						edges := f.baseIDs(rng, 1)
						if len(accepted) > 0 {
							edges = append(edges, accepted[rng.Intn(len(accepted))])
						}
						nodes = append(nodes, f.newNode(fmt.Sprintf("k%d-%d-%d-%d", round, c, i, j), rng.Intn(f.ds.N()), rng, edges...))
					}
					mu.Unlock()
					b := body(nodes...)
					status, ans, _, err := post(hc, p.url, b)
					mu.Lock()
					if err != nil {
						unsure = append(unsure, b)
						mu.Unlock()
						return
					}
					if status != http.StatusOK {
						mu.Unlock()
						t.Errorf("round %d: status %d: %s", round, status, ans)
						return
					}
					answered = append(answered, sent{b, string(ans), k})
					for _, n := range nodes {
						accepted = append(accepted, n["id"].(string))
					}
					mu.Unlock()
				}
			}(c, rng.Int63())
		}
		time.Sleep(time.Duration(100+rng.Intn(200)) * time.Millisecond)
		p.kill()
		wg.Wait()
	}
	p := startProc(t, f.args(log, "-fmp", mode)...)
	defer p.term()
	if strings.Contains(p.errText(), "dropped a torn last record") {
		torn++
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	lost, nodes := 0, 0
	for _, s := range answered {
		status, b, repeat, err := post(hc, p.url, s.body)
		require.NoError(t, err)
		if status != http.StatusOK || !repeat || string(b) != s.answer {
			lost++
			t.Errorf("an answered request is lost or changed: status %d, repeat %v: %s, was %s", status, repeat, b, s.answer)
		}
		nodes += s.nodes
	}
	late := 0
	for _, b := range unsure {
		status, ans, repeat, err := post(hc, p.url, b)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, status, "a request without an answer, sent again: %s", ans)
		if !repeat {
			late++
		}
	}
	t.Logf("-fmp %s, kill -9: %d kills, %d requests answered (%d nodes), %d lost; %d requests cut off without an answer (%d of them had not been accepted and were accepted when sent again); torn last records dropped at start-up: %d",
		mode, kills, len(answered), nodes, lost, len(unsure), late, torn)
	assert.Zero(t, lost)
	assert.Greater(t, len(answered), kills, "the test means something only if requests were answered between kills")
}

// TestLoad sends 16 clients × 200 requests of 1–5 nodes each to the
// command on loopback and checks that every one is answered 200; it
// logs the latency percentiles and the server's peak memory (no timing
// is asserted).
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	f := loadFixture(t)
	log := filepath.Join(t.TempDir(), "serve.log")
	mode := os.Getenv("SERVE_LOAD_FMP")
	if mode == "" {
		mode = "fitted"
	}
	p := startProc(t, f.args(log, "-fmp", mode)...)
	defer p.term()
	const clients, requests = 16, 200
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		nodes     int
	)
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(c)))
			var mine []string
			for i := 0; i < requests; i++ {
				k := 1 + rng.Intn(5)
				var ns []map[string]any
				for j := 0; j < k; j++ {
					edges := f.baseIDs(rng, 1)
					if len(mine) > 0 && rng.Intn(2) == 0 {
						edges = append(edges, mine[rng.Intn(len(mine))])
					}
					ns = append(ns, f.newNode(fmt.Sprintf("l%d-%d-%d", c, i, j), rng.Intn(f.ds.N()), rng, edges...))
				}
				b := body(ns...)
				t0 := time.Now()
				status, ans, _, err := post(hc, p.url, b)
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				if err != nil || status != http.StatusOK {
					errs++
					if errs < 5 {
						t.Errorf("status %d, %v: %s", status, err, ans)
					}
				} else {
					nodes += k
					for _, n := range ns {
						mine = append(mine, n["id"].(string))
					}
				}
				mu.Unlock()
			}
		}(c)
	}
	// A reader polls /stats meanwhile: reads are safe beside the writer,
	// and what they see only grows.
	stopStats := make(chan struct{})
	statsDone := make(chan int)
	go func() {
		polls, last := 0, -1
		defer func() { statsDone <- polls }()
		for {
			select {
			case <-stopStats:
				return
			case <-time.After(50 * time.Millisecond):
			}
			resp, err := hc.Get(p.url + "/stats")
			if err != nil {
				t.Errorf("/stats: %v", err)
				return
			}
			var st stats
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil || st.AcceptedNodes < last {
				t.Errorf("/stats: %v, %d accepted nodes after %d", err, st.AcceptedNodes, last)
				return
			}
			last = st.AcceptedNodes
			polls++
		}
	}()
	wg.Wait()
	took := time.Since(start)
	close(stopStats)
	polls := <-statsDone
	hwm := vmHWM(p.cmd.Process.Pid)
	slices.Sort(latencies)
	pct := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	t.Logf("load (-fmp %s): %d clients × %d requests (%d nodes) in %v (%.0f requests/s), %d errors; latency p50 %v, p99 %v, max %v; server peak memory (VmHWM) %s; log %d bytes; /stats read %d times meanwhile",
		mode, clients, requests, nodes, took.Round(time.Millisecond), float64(clients*requests)/took.Seconds(), errs,
		pct(0.5).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), latencies[len(latencies)-1].Round(10*time.Microsecond), hwm, fileSize(t, log), polls)
	assert.Zero(t, errs)
}

// vmHWM reads a process's peak resident memory from /proc (Linux).
func vmHWM(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + runtime.GOOS + ")"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.Join(strings.Fields(strings.TrimPrefix(l, "VmHWM:")), " ")
		}
	}
	return "unknown"
}
