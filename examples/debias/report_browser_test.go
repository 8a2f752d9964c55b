package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium returns the path of a headless-capable Chromium (Debian's
// package installs /usr/bin/chromium; .ci/run installs it), or skips the
// test when there is none, except under CI (CI set), where a missing
// browser fails: CI must not skip the check silently.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal("CI is set and no chromium is installed: .ci/run installs Debian's chromium (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); under CI this test fails instead")
	return ""
}

// headless runs chromium headless on a file with extra flags, for at
// most 60 seconds, and returns its stdout and stderr.
func headless(t *testing.T, bin, file string, flags ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, flags...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "chromium did not finish within 60 s")
	require.NoError(t, err, "chromium failed: %s", lastLines(errb.String(), 10))
	return out.String(), errb.String()
}

// consoleErrors returns chromium's log lines of console messages and
// uncaught exceptions. Chromium logs every console message of a page as
// "INFO:CONSOLE" whatever its level, and the report has no script, so any
// such line is an error: a resource that failed to load, a script where
// none should be.
func consoleErrors(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// TestReportInChromium writes report.html from a small run on generated
// files and opens it in headless Chromium: the DOM Chromium builds holds
// both inline figures whole (as many point labels as the file), Chromium
// logs no console message, and a screenshot is not blank (enough
// non-white pixels, and the figures' colours). A page with a script
// error checks that the console check catches one.
func TestReportInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	in := userFiles(t, dir, 400, 3)
	out := filepath.Join(dir, "res")
	code, _, stderr := runCmd(append(append(append([]string{}, in...), fast...), "-out", out)...)
	require.Equal(t, 0, code, stderr)
	page := filepath.Join(out, "report.html")
	src, err := os.ReadFile(page)
	require.NoError(t, err)

	// The DOM after loading (virtual time lets anything pending run).
	dom, log := headless(t, bin, page, "--virtual-time-budget=5000", "--dump-dom")
	assert.Empty(t, consoleErrors(log), "console messages of report.html")
	for _, id := range []string{`id="frontier"`, `id="groups"`, `id="results"`} {
		assert.True(t, strings.Contains(dom, id), "the DOM has no %s", id)
	}
	assert.Equal(t, 2, strings.Count(dom, "<svg"), "two inline figures in the DOM")
	for _, class := range []string{`class="pointlabel"`, `class="panel"`, `class="legend"`} {
		assert.Equal(t, strings.Count(string(src), class), strings.Count(dom, class), "the DOM holds every %s of the file: an SVG cut short by the HTML parser loses some", class)
	}

	// A screenshot that is not blank.
	shot := filepath.Join(t.TempDir(), "report.png")
	_, log = headless(t, bin, page, "--screenshot="+shot, "--window-size=1200,2000")
	assert.Empty(t, consoleErrors(log), "console messages of report.html")
	f, err := os.Open(shot)
	require.NoError(t, err, "no screenshot")
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	inked, colours := inkAndColours(img)
	b := img.Bounds()
	assert.Greater(t, inked, b.Dx()*b.Dy()/50, "under 2%% of the screenshot is not white: blank")
	assert.Greater(t, colours, 20, "the screenshot has %d colours: the figures' are missing", colours)

	// The console check catches an error.
	bad := filepath.Join(t.TempDir(), "bad.html")
	require.NoError(t, os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>`), 0o644))
	_, log = headless(t, bin, bad, "--virtual-time-budget=2000", "--dump-dom")
	assert.NotEmpty(t, consoleErrors(log), "an uncaught error went unnoticed; chromium's log:\n%s", lastLines(log, 10))
}

// inkAndColours counts the pixels that are not (nearly) white and the
// distinct colours (to 4 bits a channel).
func inkAndColours(img image.Image) (int, int) {
	b := img.Bounds()
	inked := 0
	seen := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xF000 || g < 0xF000 || bl < 0xF000 {
				inked++
			}
			seen[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
		}
	}
	return inked, len(seen)
}
