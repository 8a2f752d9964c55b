// Package tmpfile creates the temporary files that commands and writers
// fill and then rename into place.
package tmpfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Create creates a new file in dir named prefix + a random word + suffix,
// opened for reading and writing. Like os.CreateTemp it creates the file
// exclusively, so never through a symbolic link or over another file;
// unlike it, the file gets the permissions os.Create gives (0666 less the
// umask) and not 0600, because it is renamed into place as an output for
// the user to read. (The random name is not a modelling choice: no seed.)
func Create(dir, prefix, suffix string) (*os.File, error) {
	if dir == "" {
		dir = "."
	}
	for try := 0; try < 1000; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64()>>16, 36)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("tmpfile: no free name %s*%s in %s after 1000 tries", prefix, suffix, dir)
}
