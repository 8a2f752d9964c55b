// Package features stores a node feature matrix in a file and reads it
// back memory-mapped, for feature matrices that need not fit in memory
// (10 million nodes × 64 float32 features are 2.56 GB).
//
// # Writing and reading
//
// A [Writer] streams rows into a new file: Create(path, rows, cols), then
// WriteRow once per row in order, then Close. The rows go to a temporary
// file beside path (unique to the Writer), which Close flushes, syncs to disk and renames to path only when every
// declared row was written, so a crash or an error never leaves a file at
// path that looks complete. [Write] does the same for a whole in-memory
// matrix (a datasets.Dataset's Features), converting float64 to float32.
// Both refuse non-finite values, naming the row and column.
//
// [Open] maps a file read-only (on unix systems: syscall.Mmap, PROT_READ,
// MAP_SHARED) and checks it before returning: the header and its
// checksum, the exact file size, the checksum of the data and that every
// value is finite, in one streaming pass over the mapping. The data are
// not copied: [Matrix].Data and Matrix.Row are views of the mapping, and
// the operating system pages them in and out as they are used (they
// count as reclaimable page cache, not as the program's own memory). On
// other systems, and on big-endian unix machines, Open reads the file into
// memory instead, with the same checks.
//
//	w, err := features.Create("x.fmx", n, d)
//	if err != nil { ... }
//	defer w.Abort() // removes the temporary file unless Close succeeded
//	for i := 0; i < n; i++ {
//		if err := w.WriteRow(row(i)); err != nil { ... }
//	}
//	if err := w.Close(); err != nil { ... }
//
//	m, err := features.Open("x.fmx")
//	if err != nil { ... }
//	defer m.Close()
//	x := m.Data() // n·d float32, row-major, valid until Close
//
// # File format (version 1)
//
// All integers are little-endian. Offsets are in bytes.
//
//	offset  size  field
//	0       8     magic, the ASCII bytes "FAIRMPX1"
//	8       4     format version, uint32 = 1
//	12      4     element type, uint32 = 1 (IEEE 754 binary32, little-endian)
//	16      8     rows n, uint64 (>= 1)
//	24      8     columns d, uint64 (>= 1)
//	32      28    reserved, all zero
//	60      4     CRC-32C of bytes 0..59, uint32
//	64      4·n·d the values, float32, row-major: value (i, j) at 64 + 4·(i·d + j)
//	64+4·n·d 4    CRC-32C of the 4·n·d data bytes, uint32
//
// The file is exactly 68 + 4·n·d bytes. CRC-32C is CRC-32 with the
// Castagnoli polynomial (hash/crc32, crc32.MakeTable(crc32.Castagnoli)).
// The header is 64 bytes, a multiple of 4 (and of a cache line), so the
// values of a page-aligned mapping are aligned for float32. Every value
// is finite. Files conventionally end in ".fmx".
//
// # Errors
//
// Anything a file or a caller's data can cause is an error naming the
// file and what was wrong and expected: a wrong magic, an unknown version
// or element type, a header or data checksum mismatch (with the stored
// and computed sums), a truncated or extended file (with the expected and
// actual sizes), a non-finite value (with its row and column), a row of
// the wrong length or beyond the declared count, a Close before every row
// was written, and row ids out of range in Matrix.Gather. Underlying I/O
// errors are wrapped (errors.Is(err, fs.ErrNotExist) works). Matrix.Row
// panics on an index out of range, as a slice does (a programmer error).
//
// A mapped file must not be truncated or rewritten while it is open: the
// operating system would then fault on access to the missing pages,
// which Go reports as a fatal error, not as an error value. Writers never
// do this to an existing file (they write a temporary file and rename
// it), so replacing a file with Create/Close while another process has it
// open is safe: the reader keeps the old contents.
package features
