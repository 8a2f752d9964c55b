package features

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
)

// Format constants (see the package doc).
const (
	// magic is the first 8 bytes of every feature file.
	magic = "FAIRMPX1"
	// version is the format version this package writes and reads.
	version = 1
	// elemFloat32 is the element-type code of little-endian float32.
	elemFloat32 = 1
	// headerSize is the size of the header in bytes; the values start at
	// this offset.
	headerSize = 64
	// trailerSize is the size of the trailer (the data CRC-32C) in bytes.
	trailerSize = 4
)

// castagnoli is the CRC-32C table of the header and data checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileSize returns the size in bytes of a file of rows × cols values, or an
// error if rows or cols is < 1 or the size overflows an int (the mapping
// of the whole file must be addressable on this machine).
func fileSize(rows, cols uint64) (int, error) {
	if rows < 1 || cols < 1 {
		return 0, fmt.Errorf("%d × %d values, want rows >= 1 and cols >= 1", rows, cols)
	}
	const maxInt = uint64(math.MaxInt)
	if rows > maxInt/cols || rows*cols > (maxInt-headerSize-trailerSize)/4 {
		return 0, fmt.Errorf("%d × %d float32 values exceed the %d bytes addressable on this machine", rows, cols, maxInt)
	}
	return headerSize + 4*int(rows*cols) + trailerSize, nil
}

// encodeHeader returns the 64-byte header of a rows × cols file.
func encodeHeader(rows, cols int) []byte {
	h := make([]byte, headerSize)
	copy(h, magic)
	binary.LittleEndian.PutUint32(h[8:], version)
	binary.LittleEndian.PutUint32(h[12:], elemFloat32)
	binary.LittleEndian.PutUint64(h[16:], uint64(rows))
	binary.LittleEndian.PutUint64(h[24:], uint64(cols))
	binary.LittleEndian.PutUint32(h[60:], crc32.Checksum(h[:60], castagnoli))
	return h
}

// decodeHeader checks a header read from a file of the given size and
// returns its shape. h holds the file's first min(size, 64) bytes.
func decodeHeader(h []byte, size int64) (rows, cols int, err error) {
	if len(h) < len(magic) || string(h[:len(magic)]) != magic {
		m := h[:min(len(h), len(magic))]
		return 0, 0, fmt.Errorf("starts with %q, want the magic %q: not a fairmp feature file", m, magic)
	}
	if len(h) < headerSize {
		return 0, 0, fmt.Errorf("file is %d bytes, want at least the %d-byte header: truncated", size, headerSize)
	}
	stored, computed := binary.LittleEndian.Uint32(h[60:]), crc32.Checksum(h[:60], castagnoli)
	if stored != computed {
		return 0, 0, fmt.Errorf("header checksum mismatch: stored CRC-32C %08x, computed %08x over bytes 0..59: the header is corrupted", stored, computed)
	}
	if v := binary.LittleEndian.Uint32(h[8:]); v != version {
		return 0, 0, fmt.Errorf("format version %d, want %d (this package reads version %d only)", v, version, version)
	}
	if e := binary.LittleEndian.Uint32(h[12:]); e != elemFloat32 {
		return 0, 0, fmt.Errorf("element type %d, want %d (float32)", e, elemFloat32)
	}
	if !bytes.Equal(h[32:60], make([]byte, 28)) {
		return 0, 0, fmt.Errorf("reserved header bytes 32..59 are not zero")
	}
	r, c := binary.LittleEndian.Uint64(h[16:]), binary.LittleEndian.Uint64(h[24:])
	want, err := fileSize(r, c)
	if err != nil {
		return 0, 0, fmt.Errorf("header: %w", err)
	}
	if size != int64(want) {
		what := "truncated"
		if size > int64(want) {
			what = "extra bytes at the end"
		}
		return 0, 0, fmt.Errorf("file is %d bytes, want %d (%d-byte header + %d × %d × 4 data bytes + %d-byte trailer): %s", size, want, headerSize, r, c, trailerSize, what)
	}
	return int(r), int(c), nil
}

// checker streams over the data bytes, computing their CRC-32C and
// finding the first non-finite value.
type checker struct {
	crc      uint32
	pos      int // values seen
	firstBad int // index of the first non-finite value, or -1
	badBits  uint32
}

func newChecker() checker { return checker{firstBad: -1} }

// update takes the next data bytes (a multiple of 4).
func (c *checker) update(b []byte) {
	c.crc = crc32.Update(c.crc, castagnoli, b)
	if c.firstBad < 0 {
		for k := 0; k+4 <= len(b); k += 4 {
			if u := binary.LittleEndian.Uint32(b[k:]); u&0x7f800000 == 0x7f800000 {
				c.firstBad, c.badBits = c.pos+k/4, u
				break
			}
		}
	}
	c.pos += len(b) / 4
}

// finish checks the stored data checksum, then the values.
func (c *checker) finish(trailer []byte, cols int) error {
	if stored := binary.LittleEndian.Uint32(trailer); stored != c.crc {
		return fmt.Errorf("data checksum mismatch: stored CRC-32C %08x, computed %08x: the data are corrupted", stored, c.crc)
	}
	if c.firstBad >= 0 {
		return fmt.Errorf("row %d, column %d is %v, want a finite value", c.firstBad/cols, c.firstBad%cols, math.Float32frombits(c.badBits))
	}
	return nil
}

// verify checks the data and trailer bytes of a whole file held in memory
// (mapped or read), in chunks small enough to stay in cache between the
// checksum and the value check.
func verify(data, trailer []byte, cols int) error {
	c := newChecker()
	const chunk = 1 << 16
	for off := 0; off < len(data); off += chunk {
		c.update(data[off:min(off+chunk, len(data))])
	}
	return c.finish(trailer, cols)
}
