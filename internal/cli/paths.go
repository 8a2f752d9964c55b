package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fairmp/fairmp/internal/tmpfile"
)

// ResolvePath returns p absolute with the symbolic links of every
// existing component followed and "." and ".." applied where they lead
// (after a symlink, ".." is the parent of its target, as the system has
// it); the components that do not exist yet are appended as written.
// Commands resolve every path they write under before writing, so that
// what they check (is this an input, is this file ours) is about the
// place the bytes land.
func ResolvePath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	sep := string(filepath.Separator)
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd + sep + p // not filepath.Join: it would apply ".." before the links
	}
	vol := filepath.VolumeName(p)
	parts := strings.Split(p[len(vol):], sep)
	for k := len(parts); k > 0; k-- {
		head := vol + strings.Join(parts[:k], sep)
		if strings.Trim(head[len(vol):], sep) == "" {
			head = vol + sep
		}
		r, err := filepath.EvalSymlinks(head)
		if err != nil {
			continue
		}
		if !filepath.IsAbs(r) {
			if r, err = filepath.Abs(r); err != nil {
				return "", err
			}
		}
		return filepath.Join(append([]string{r}, parts[k:]...)...), nil
	}
	return filepath.Clean(p), nil
}

// Within reports whether path is dir or inside it (both resolved).
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// ErrNotOurs is returned by ReplaceFile when the file in the way is not
// one the command wrote.
var ErrNotOurs = errors.New("not a file this command wrote")

// ReplaceFile writes data to path whole or not at all: to a new
// temporary file beside it (created exclusively, so never through a
// symlink), synced, then renamed over path. A file already at path is
// replaced only if it is a regular file (not a symlink) whose content
// begins with mark, the bytes this command starts its files with;
// anything else is left as it is and the error wraps ErrNotOurs. A new
// file gets os.Create's permissions (0666 less the umask), a replaced one
// keeps its own. Resolve path's folder first (ResolvePath).
func ReplaceFile(path string, data, mark []byte) error {
	var mode fs.FileMode // the replaced file's permissions, if one is
	if fi, err := os.Lstat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is in the way and is not a regular file: %w; move it away or write elsewhere", path, ErrNotOurs)
		}
		head, err := readHead(path, len(mark)) // a shorter file cannot begin with mark
		if err != nil {
			return err
		}
		if !bytes.Equal(head, mark) {
			return fmt.Errorf("%s is in the way and does not begin as this command's files do: %w; move it away or write elsewhere", path, ErrNotOurs)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := tmpfile.Create(filepath.Dir(path), "."+filepath.Base(path)+".tmp-", "")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && mode != 0 {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
