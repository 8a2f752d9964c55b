package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// An outDir is -out in the making. It is a temporary folder beside -out,
// named ".<base>.tmp-<pid>-<n>", created before training (so that an
// unwritable -out is reported at once), filled with synced files, and put
// in place by commit with one rename: the results are never half there.
//
// With -overwrite and an existing -out, commit exchanges the two folders
// atomically where the system can (Linux: renameat2 with
// RENAME_EXCHANGE), then removes the old results; elsewhere it renames
// -out aside to ".<base>.old-<pid>-<n>", renames the new folder in, and
// removes the old one, so that a crash between the two renames leaves the
// old results in that folder (which the next run of the command cleans
// up, or a user renames back).
type outDir struct {
	final, tmp string
	overwrite  bool
	kept       bool // the temporary folder holds results the user must see
}

// prepareOut refuses an -out that equals or contains an input (with
// -overwrite it would be deleted), removes the temporary folders earlier
// runs of the command left beside -out (their process is gone), and
// creates the new temporary folder with the permissions the umask
// allows.
func prepareOut(out string, overwrite bool, inputs map[string]string) (*outDir, error) {
	final, err := filepath.Abs(filepath.Clean(out))
	if err != nil {
		return nil, badInput("-out %s: %v", out, err)
	}
	for flag, in := range inputs {
		if in == "" {
			continue
		}
		abs, err := filepath.Abs(in)
		if err != nil {
			continue
		}
		if within(final, abs) || within(final, resolve(abs)) {
			return nil, badInput("-out %s holds the input %s %s: results go to a folder of their own (it would be replaced)", out, flag, in)
		}
	}
	if fi, err := os.Stat(final); err == nil && !fi.IsDir() {
		return nil, badInput("-out %s is a file, want a folder", out)
	}
	parent, base := filepath.Dir(final), filepath.Base(final)
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, badInput("-out %s: %v", out, err)
	}
	cleanStale(parent, base)
	d := &outDir{final: final, overwrite: overwrite}
	for n := 0; ; n++ {
		d.tmp = filepath.Join(parent, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), n))
		err := os.Mkdir(d.tmp, 0o777)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > 100 {
			return nil, badInput("-out %s: cannot create a folder beside it: %v", out, err)
		}
	}
	return d, nil
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."))
}

// resolve follows symbolic links as far as they exist.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// cleanStale removes ".<base>.tmp-<pid>-<n>" and ".<base>.old-<pid>-<n>"
// folders beside -out whose process no longer runs: what a killed run of
// the command left. Nothing else is touched.
func cleanStale(parent, base string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, kind := range []string{".tmp-", ".old-"} {
			rest, ok := strings.CutPrefix(e.Name(), "."+base+kind)
			if !ok {
				continue
			}
			pid, n, ok := strings.Cut(rest, "-")
			p, err1 := strconv.Atoi(pid)
			_, err2 := strconv.Atoi(n)
			if !ok || err1 != nil || err2 != nil || p == os.Getpid() || processAlive(p) {
				continue
			}
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// path returns a file's path in the temporary folder.
func (d *outDir) path(name string) string { return filepath.Join(d.tmp, name) }

// abort removes the temporary folder, unless it holds results an error
// message names.
func (d *outDir) abort() {
	if !d.kept {
		os.RemoveAll(d.tmp)
	}
}

// commit puts the temporary folder in place of -out. If -out appeared
// while the command ran and -overwrite is off, the results stay in the
// temporary folder and the error names it.
func (d *outDir) commit() error {
	if err := syncDir(d.tmp); err != nil {
		return err
	}
	parent := filepath.Dir(d.final)
	if _, err := os.Lstat(d.final); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(d.tmp, d.final); err != nil {
			if _, serr := os.Stat(d.final); serr == nil {
				return d.appeared()
			}
			return err
		}
		return syncDir(parent)
	}
	if !d.overwrite {
		return d.appeared()
	}
	exchanged, err := exchange(d.tmp, d.final)
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
	old := strings.Replace(d.tmp, ".tmp-", ".old-", 1)
	if err := os.Rename(d.final, old); err != nil {
		return err
	}
	if err := os.Rename(d.tmp, d.final); err != nil {
		os.Rename(old, d.final)
		return err
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

func (d *outDir) appeared() error {
	d.kept = true
	return badInput("-out %s appeared while the command ran (add -overwrite to replace it); the results are in %s", d.final, d.tmp)
}

// syncDir flushes a folder's entries to disk.
func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, fs.ErrInvalid) {
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
