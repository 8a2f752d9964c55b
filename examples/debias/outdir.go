package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fairmp/fairmp/internal/cli"
)

// An outDir is a folder the command writes in the making: -out's results
// or -export's files. It is a temporary folder beside the final one,
// named ".<base>.tmp-<pid>-<n>", created before anything long (so that an
// unwritable folder is reported at once), filled with synced files and a
// marker (marker), and put in place by commit with one rename: the
// folder is never half there.
//
// What the command may replace: every path (the folder, the inputs, the
// current folder) is resolved first (cli.ResolvePath: symlinks in any
// component, ".."), and the folder is refused when it is, or holds, an
// input or the current folder. An existing folder is refused without
// -overwrite; with it, it is replaced only if it is empty or holds this
// command's marker and nothing but the files the marker lists (a file a
// user added is not the command's to delete).
//
// With -overwrite and an existing folder, commit exchanges the two
// folders atomically where the system can (Linux: renameat2 with
// RENAME_EXCHANGE), then removes the old one. Elsewhere (swapFallback)
// it renames the folder aside to ".<base>.old-<pid>-<n>", renames the new
// one in, and removes the old one only once the new one is in place; if
// the second rename fails the old one is put back. A run killed between
// the two renames leaves the old folder, then the only copy, aside: the
// next run renames it back (restoreOld) and stops to say so.
//
// If the folder appeared while the command ran (without -overwrite, or
// not one the command may replace), the new one is kept under a name of
// its own, "<base>.kept-<n>" beside it (keep), which no later run
// removes, and the error (keptError, exit status 4) says where.
type outDir struct {
	flag       string // "-out" or "-export", for messages
	name       string // the folder as the user wrote it
	final, tmp string // resolved
	overwrite  bool
	kept       string // where the results were kept, if they were
}

// marker is the file that marks a folder as this command's: it lists the
// files the command wrote there.
const marker = ".debias-output"

// keptMark, in a temporary folder, says that it holds results an error
// message named: no later run removes it.
const keptMark = ".debias-kept"

// prepareOut checks the folder flag (-out or -export) names, out, against
// the inputs (flag → path) and the current folder, restores what a
// killed run set aside, refuses an existing folder it may not replace,
// removes the temporary folders earlier runs left beside it (their
// process is gone), and creates the new temporary folder with the
// permissions the umask allows.
func prepareOut(flag, out string, overwrite bool, inputs map[string]string) (*outDir, error) {
	final, err := cli.ResolvePath(out)
	if err != nil {
		return nil, badInput("%s %s: %v", flag, out, err)
	}
	shown := out
	if filepath.Clean(out) != final {
		shown = fmt.Sprintf("%s (%s)", out, final)
	}
	if wd, err := os.Getwd(); err == nil {
		if cwd, err := cli.ResolvePath(wd); err == nil && cli.Within(final, cwd) {
			return nil, badInput("%s %s is the current folder or one of its parents: it goes to a folder of its own (with -overwrite this one would be replaced); name a new folder", flag, shown)
		}
	}
	flags := make([]string, 0, len(inputs))
	for f := range inputs {
		flags = append(flags, f)
	}
	slices.Sort(flags)
	for _, f := range flags {
		in := inputs[f]
		if in == "" {
			continue
		}
		r, err := cli.ResolvePath(in)
		if err != nil {
			continue
		}
		if cli.Within(final, r) {
			return nil, badInput("%s %s holds the input %s %s: it goes to a folder of its own (with -overwrite the input would be replaced); name a new folder", flag, shown, f, in)
		}
	}
	parent, base := filepath.Dir(final), filepath.Base(final)
	if err := restoreOld(flag, out, parent, base); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(final); err == nil {
		if !fi.IsDir() {
			return nil, badInput("%s %s is a file, want a folder", flag, shown)
		}
		if !overwrite {
			return nil, badInput("%s %s exists; choose a new folder or add -overwrite", flag, out)
		}
		if err := replaceable(final); err != nil {
			return nil, badInput("-overwrite %s %s: %v", flag, shown, err)
		}
	}
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, badInput("%s %s: %v", flag, out, err)
	}
	cleanStale(parent, base)
	d := &outDir{flag: flag, name: out, final: final, overwrite: overwrite}
	for n := 0; ; n++ {
		d.tmp = filepath.Join(parent, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), n))
		err := os.Mkdir(d.tmp, 0o777)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > 100 {
			return nil, badInput("%s %s: cannot create a folder beside it: %v", flag, out, err)
		}
	}
	return d, nil
}

// replaceable returns nil if the folder dir may be replaced with
// -overwrite: it is empty, or holds this command's marker and nothing
// but the files the marker lists; else an error saying why and what to
// do.
func replaceable(dir string) error {
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(es) == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, marker))
	if err != nil {
		return fmt.Errorf("not a results folder of this command (it has no %s file, which debias writes into every folder it creates), so it is not replaced; name a new folder, or move its contents away yourself", marker)
	}
	ours := map[string]bool{marker: true, keptMark: true}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			ours[l] = true
		}
	}
	var other []string
	for _, e := range es {
		if !ours[e.Name()] || !e.Type().IsRegular() {
			other = append(other, e.Name())
		}
	}
	if len(other) > 0 {
		return fmt.Errorf("holds %s, which this command did not write there, so it is not replaced; move %s away, or name a new folder", strings.Join(other, ", "), plural(len(other), "it", "them"))
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeMarker writes the marker into dir, listing the files there.
func writeMarker(dir string) error {
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, marker), func(w io.Writer) error {
		fmt.Fprintln(w, "# Written by fairmp's debias command with the files below. debias -overwrite")
		fmt.Fprintln(w, "# replaces this folder only while it holds nothing but them and this file.")
		for _, e := range es {
			if e.Name() != marker {
				fmt.Fprintln(w, e.Name())
			}
		}
		return nil
	})
}

// staleOf parses name as ".<base><kind><pid>-<n>" (kind ".tmp-" or
// ".old-") and returns the pid if that is what it is.
func staleOf(name, base, kind string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "."+base+kind)
	if !ok {
		return 0, false
	}
	pid, n, ok := strings.Cut(rest, "-")
	p, err1 := strconv.Atoi(pid)
	_, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || p == os.Getpid() || processAlive(p) {
		return 0, false
	}
	return p, true
}

// restoreOld renames a ".<base>.old-<pid>-<n>" folder, which a run killed
// between the two renames of the fallback swap left, back to the missing
// final folder: it is the only copy of the earlier results. It then
// returns an error saying so, so that nothing replaces them unasked.
func restoreOld(flag, out, parent, base string) error {
	final := filepath.Join(parent, base)
	if _, err := os.Lstat(final); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	es, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	for _, e := range es {
		if _, ok := staleOf(e.Name(), base, ".old-"); !ok || !e.IsDir() {
			continue
		}
		old := filepath.Join(parent, e.Name())
		if err := os.Rename(old, final); err != nil {
			return fmt.Errorf("%s %s: a run killed while replacing it left the earlier results in %s, and they could not be put back (%v): rename %s to %s yourself", flag, out, old, err, old, final)
		}
		syncDir(parent)
		return badInput("%s %s: a run killed while replacing it had left the earlier results in %s; they are back in %s: run again (with -overwrite to replace them)", flag, out, old, out)
	}
	return nil
}

// cleanStale removes the ".<base>.tmp-<pid>-<n>" folders beside -out
// whose process no longer runs (what a killed run left), unless they
// hold kept results (keptMark), and the ".<base>.old-<pid>-<n>" ones
// while <base> exists (the swap that set them aside was complete;
// restoreOld puts back one whose swap was not). Nothing else is touched.
func cleanStale(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	_, ferr := os.Lstat(filepath.Join(parent, base))
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if _, ok := staleOf(e.Name(), base, ".tmp-"); ok {
			if _, err := os.Lstat(filepath.Join(p, keptMark)); err != nil {
				os.RemoveAll(p)
			}
		}
		if _, ok := staleOf(e.Name(), base, ".old-"); ok && ferr == nil {
			os.RemoveAll(p)
		}
	}
}

// path returns a file's path in the temporary folder.
func (d *outDir) path(name string) string { return filepath.Join(d.tmp, name) }

// abort removes the temporary folder, unless it holds results an error
// message names.
func (d *outDir) abort() {
	if d.kept == "" {
		os.RemoveAll(d.tmp)
	}
}

// exchangeFn and renameFn are exchange and os.Rename; tests replace them
// to take the fallback swap and to make a rename fail.
var (
	exchangeFn = exchange
	renameFn   = os.Rename
)

// commit puts the temporary folder in place of the final one. If that
// appeared while the command ran and may not be replaced, the results
// are kept beside it (keep) and the error names them.
func (d *outDir) commit() error {
	if err := writeMarker(d.tmp); err != nil {
		return err
	}
	if err := syncDir(d.tmp); err != nil {
		return err
	}
	parent := filepath.Dir(d.final)
	if _, err := os.Lstat(d.final); errors.Is(err, fs.ErrNotExist) {
		if err := renameFn(d.tmp, d.final); err != nil {
			if _, serr := os.Lstat(d.final); serr == nil {
				return d.keep("appeared while the command ran (add -overwrite to replace it)")
			}
			return err
		}
		return syncDir(parent)
	}
	if !d.overwrite {
		return d.keep("appeared while the command ran (add -overwrite to replace it)")
	}
	if fi, err := os.Lstat(d.final); err != nil || !fi.IsDir() {
		return d.keep("is no longer a folder")
	}
	if err := replaceable(d.final); err != nil {
		return d.keep(fmt.Sprintf("changed while the command ran (%v)", err))
	}
	exchanged, err := exchangeFn(d.tmp, d.final)
	if err != nil {
		return err
	}
	if exchanged {
		// d.tmp now holds the old results.
		if err := syncDir(parent); err != nil {
			return err
		}
		return os.RemoveAll(d.tmp)
	}
	return d.swapFallback()
}

// swapFallback replaces the final folder with two renames: the old one
// aside, the new one in. The old one is removed only once the new one is
// in place and its parent synced; if the second rename fails the old one
// is put back, and if that fails too the error says where it is.
func (d *outDir) swapFallback() error {
	parent := filepath.Dir(d.final)
	old := strings.Replace(d.tmp, ".tmp-", ".old-", 1)
	if err := renameFn(d.final, old); err != nil {
		return err
	}
	if err := renameFn(d.tmp, d.final); err != nil {
		if berr := renameFn(old, d.final); berr != nil {
			d.kept = d.tmp
			return fmt.Errorf("%s %s: putting the new results in place failed (%v), and so did putting the earlier ones back (%v): the earlier results are in %s and the new ones in %s; rename one of them to %s", d.flag, d.name, err, berr, old, d.tmp, d.final)
		}
		return fmt.Errorf("%s %s: putting the new results in place failed, the earlier ones are back: %w", d.flag, d.name, err)
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	if fi, err := os.Stat(filepath.Join(d.final, marker)); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s: the new results are not in place after the rename; the earlier ones are in %s", d.flag, d.name, old)
	}
	return os.RemoveAll(old)
}

// keptError says that the results were written, but beside the folder
// the user named: exit status 4.
type keptError struct {
	flag, name, why, where string
}

func (e keptError) Error() string {
	return fmt.Sprintf("%s %s %s: the results were written to %s instead; look there, or move them in place yourself", e.flag, e.name, e.why, e.where)
}

// keep marks the temporary folder as kept (no later run removes it) and
// renames it to "<base>.kept-<n>" beside the final folder, the first
// such name free; if that fails the results stay in the temporary folder.
func (d *outDir) keep(why string) error {
	d.kept = d.tmp
	f, err := os.OpenFile(d.path(keptMark), os.O_WRONLY|os.O_CREATE, 0o666)
	if err == nil {
		fmt.Fprintf(f, "%s %s %s: these results were kept here; no run of debias removes this folder\n", d.flag, d.final, why)
		f.Close()
	}
	parent, base := filepath.Dir(d.final), filepath.Base(d.final)
	for n := 1; n <= 1000; n++ {
		name := filepath.Join(parent, fmt.Sprintf("%s.kept-%d", base, n))
		if _, err := os.Lstat(name); err == nil {
			continue
		}
		if err := os.Rename(d.tmp, name); err == nil {
			d.kept = name
			syncDir(parent)
			break
		}
	}
	return keptError{flag: d.flag, name: d.name, why: why, where: d.kept}
}

// syncDir flushes a folder's entries to disk (where the system cannot
// sync a folder, fs.ErrInvalid, that is not an error).
func syncDir(path string) error { return syncPath(path, true) }

// syncFile flushes a file another function wrote to disk.
func syncFile(path string) error { return syncPath(path, false) }

// syncPath opens path, syncs it and closes it; dir tolerates a system
// that cannot sync folders.
func syncPath(path string, dir bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !(dir && errors.Is(err, fs.ErrInvalid)) {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

// writeFile creates path, lets fill write it through a buffer, syncs it
// to disk and closes it, returning the first error.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
