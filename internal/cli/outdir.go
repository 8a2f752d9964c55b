package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ManifestName returns the file, in a folder command writes its files
// into, that lists them (ClaimDir): ".command.files". One per command, so
// that two commands may write into one folder, each its own files; the
// globs commands read their inputs with (nodes-*.txt) do not match it.
func ManifestName(command string) string { return "." + command + ".files" }

// manifestMagic begins a manifest; the command's name follows it.
const manifestMagic = "fairmp output files 1: "

// ClaimDir makes dir (resolved with ResolvePath; created if missing, with
// the permissions the umask allows) a folder that command may write the
// files names into, and returns the resolved folder. flag names the
// folder in messages ("-out"). family reports whether a name is of the
// kinds of file this run writes (nodes-*.txt, metrics.json), whoever
// wrote it.
//
// What the command wrote is what an earlier run of it listed in the
// folder's manifest (ManifestName(command)), with the temporary files of those
// ("name" + ".tmp", "name.*.tmp", ".name.tmp-*"). The folder is refused,
// with an error that names the entry and wraps ErrNotOurs, when an entry
// the command did not write is one of names or of the family (a user's
// nodes-00099.txt would be read with the job's own), or a temporary name
// of one (a writer would write through a symlink there), or when one it did
// is no longer a regular file; the folder is then left as it was. Other
// entries (a user's notes, a subfolder of results) are left alone.
// Then the earlier runs' files of the family that this run does not
// write, and every temporary file of theirs, are removed (so that a run
// of fewer shards than the last leaves none of the last's to be read as
// its own), and the manifest is rewritten to list names and the earlier
// files kept, before the caller writes any. A name must be a plain file
// name (no separator, not "." or "..").
//
// ClaimDir keeps to what the command wrote; it does not make the files'
// writes atomic (write each to a temporary name and rename it, as
// ReplaceFile does) nor stop two runs writing the folder at once.
func ClaimDir(flag, dir, command string, names []string, family func(name string) bool) (string, error) {
	for _, n := range names {
		if !plainName(n) {
			return "", fmt.Errorf("cli.ClaimDir: %q is not a plain file name", n)
		}
	}
	final, shown, err := resolveShown(flag, dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Lstat(final)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(final, 0o777); err != nil {
			return "", fmt.Errorf("%s %s: %w", flag, shown, err)
		}
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	case !fi.IsDir():
		return "", fmt.Errorf("%s %s is a file, want a folder", flag, shown)
	}
	entries, err := os.ReadDir(final)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		present[e.Name()] = true
	}
	manifest := ManifestName(command)
	var listed []string
	if present[manifest] {
		if listed, err = readManifest(filepath.Join(final, manifest), command); err != nil {
			return "", fmt.Errorf("%s %s: %w; name a new or empty folder", flag, shown, err)
		}
	}
	ours := map[string]bool{}
	for _, n := range listed {
		ours[n] = true
	}
	// In the way: a file this run writes, one of its kinds, or a
	// temporary name of either (a writer's "name.tmp" that is a user's
	// symlink would be written through).
	inWay := func(n string) bool { return family(n) || slices.Contains(names, n) }
	var remove []string
	for _, e := range entries {
		name := e.Name()
		if name == manifest {
			continue
		}
		isTemp := tempOf(name, func(n string) bool { return ours[n] })
		switch {
		case !ours[name] && !isTemp:
			if inWay(name) || tempOf(name, inWay) {
				return "", fmt.Errorf("%s %s holds %s, which %s did not write (%s does not list it): %w; name a new or empty folder, or move the file away", flag, shown, name, command, manifest, ErrNotOurs)
			}
			continue // not ours, not in the way: left alone
		case !e.Type().IsRegular():
			return "", fmt.Errorf("%s %s holds %s, which is no longer a regular file: %w; name a new or empty folder, or move it away", flag, shown, name, ErrNotOurs)
		case isTemp || family(name) && !slices.Contains(names, name):
			remove = append(remove, name)
		}
	}
	keep := slices.Clone(names)
	for _, n := range listed {
		if present[n] && !slices.Contains(remove, n) && !slices.Contains(keep, n) {
			keep = append(keep, n)
		}
	}
	slices.Sort(keep)
	// The removals first, while the old list still names them, then the
	// new list, before the caller writes: a run stopped anywhere leaves
	// no file of the family that no list names.
	if err := removeEarlier(flag, shown, final, remove); err != nil {
		return "", err
	}
	var b bytes.Buffer
	b.WriteString(manifestMagic + command + "\n")
	for _, n := range keep {
		b.WriteString(n + "\n")
	}
	mp := filepath.Join(final, manifest)
	if err := ReplaceFile(mp, b.Bytes(), []byte(manifestMagic)); err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	}
	return final, nil
}

// readManifest reads the names a manifest of command lists.
func readManifest(path, command string) ([]string, error) {
	name := filepath.Base(path)
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: %w", name, ErrNotOurs)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != manifestMagic+command {
		return nil, fmt.Errorf("%s was not written by %s: %w", name, command, ErrNotOurs)
	}
	var names []string
	for line := 2; sc.Scan(); line++ {
		n := sc.Text()
		if !plainName(n) {
			return nil, fmt.Errorf("%s:%d: %q is not a file name: the list of the files %s wrote is damaged", name, line, n, command)
		}
		names = append(names, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return names, nil
}

// plainName reports whether n is a file name without a folder.
func plainName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.HasSuffix(n, ".files") && !strings.ContainsAny(n, `/\`) && filepath.Base(n) == n
}

// tempOf reports whether name is a temporary file of a name for which
// of reports true: the forms this repository's writers use (path +
// ".tmp", path.*.tmp, .path.tmp-*).
func tempOf(name string, of func(string) bool) bool {
	if o, ok := strings.CutSuffix(name, ".tmp"); ok {
		if of(o) {
			return true
		}
		if k := strings.LastIndexByte(o, '.'); k > 0 && of(o[:k]) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(name, "."); ok {
		if k := strings.Index(rest, ".tmp-"); k > 0 && of(rest[:k]) {
			return true
		}
	}
	return false
}

// workMagic begins the marker of a work folder; the command's name
// follows it.
const workMagic = "fairmp work folder 1: "

// ClaimWorkDir makes dir (resolved; created if missing) a work folder of
// command's, one whose files only command's runs write (the blocks a
// stage leaves for the next), and returns the resolved folder. A folder
// that holds anything must hold command's marker (".command.work",
// written here the first time), else it is refused with an error that
// wraps ErrNotOurs. Then the regular files for which clear reports true,
// and their temporary files (as ClaimDir's), are removed: a stage run
// again makes the later stages' files stale, and a glob must not read
// them with the new ones. A subfolder or link that clear names is
// refused rather than removed.
func ClaimWorkDir(flag, dir, command string, clear func(name string) bool) (string, error) {
	final, shown, err := resolveShown(flag, dir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(final, 0o777); err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	}
	entries, err := os.ReadDir(final)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	}
	marker := "." + command + ".work"
	mark := []byte(workMagic + command + "\n")
	if len(entries) > 0 {
		b, err := readHead(filepath.Join(final, marker), len(mark))
		if err != nil || !bytes.Equal(b, mark) {
			return "", fmt.Errorf("%s %s holds files and is not a work folder of %s's (no %s): %w; name a new or empty folder", flag, shown, command, marker, ErrNotOurs)
		}
	}
	var remove []string
	for _, e := range entries {
		n := e.Name()
		if n != marker && (clear(n) || tempOf(n, clear)) {
			if !e.Type().IsRegular() {
				return "", fmt.Errorf("%s %s holds %s, which is not a regular file: %w; move it away", flag, shown, n, ErrNotOurs)
			}
			remove = append(remove, n)
		}
	}
	if err := ReplaceFile(filepath.Join(final, marker), mark, mark); err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, shown, err)
	}
	return final, removeEarlier(flag, shown, final, remove)
}

// readHead reads up to n bytes from the start of the regular file path.
func readHead(path string, n int) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return b[:k], err
}

// resolveShown resolves the folder a flag names, and returns it with the
// way messages show it: as written, and resolved when that differs.
func resolveShown(flag, dir string) (final, shown string, err error) {
	final, err = ResolvePath(dir)
	if err != nil {
		return "", "", fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	shown = dir
	if filepath.Clean(dir) != final {
		shown = fmt.Sprintf("%s (%s)", dir, final)
	}
	return final, shown, nil
}

// removeEarlier removes an earlier run's files names from final.
func removeEarlier(flag, shown, final string, names []string) error {
	for _, n := range names {
		if err := os.Remove(filepath.Join(final, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: removing the earlier run's %s: %w", flag, shown, n, err)
		}
	}
	return nil
}
