package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// The accepted-node log (-log) is append-only:
//
//	"fairmp-serve-log v1\n"            the magic, 20 bytes
//	record 0                           the header: what the log was written for
//	record 1, 2, ...                   one per accepted request
//
// and a record is
//
//	length   uint32, little-endian      the payload's length (1 .. maxRecord)
//	crc      uint32, little-endian      CRC-32C of the 4 length bytes and the payload
//	payload  length bytes               JSON: logHeader, or a request in canonical form
//
// A request's record is written in one write and fsynced before the
// request is answered, so every answered request is whole on disk. A
// crash (kill -9, power loss) can only leave the last append cut or
// unsynced: its bytes cut short, or a tail the file system extended but
// never wrote (zeros). At start-up a bad record is taken for such a torn
// tail, dropped (the file is cut back to the record before it) and
// reported, only when all of these hold (logReader.classify):
//
//   - it is shorter than a record can be (fewer than 8 bytes, or fewer
//     than its length field says), or the file ends in a zero byte (a
//     record never does: its payload is JSON);
//   - no whole record (a length that fits and a checksum that matches)
//     starts anywhere after it;
//   - its bytes are not a whole record under another length (a damaged
//     length field of the last record).
//
// Anything else is damage, not a crash: the log is refused with the
// byte offset of the bad record, nothing replayed and nothing cut, so
// that a flipped bit never deletes answered requests. The header record
// is rewritten only when the file holds nothing after the magic but a
// torn header (a crash while the log was created).

const (
	journalMagic = "fairmp-serve-log v1\n"
	// maxRecord bounds a record's payload (and so what replay holds in
	// memory at once); -max-body is capped well below it.
	maxRecord = 1 << 28
)

var (
	crcTable  = crc32.MakeTable(crc32.Castagnoli)
	errLocked = errors.New("locked by another process")
)

// journal is an open log, locked against other processes.
type journal struct {
	path string
	f    *os.File
	// size is the length of the log's whole records: where the next
	// record goes, and where a failed append cuts the file back to.
	size int64
	// broken is set when a failed append could not be undone: the file
	// may end in part of a record, and nothing more may follow it.
	broken error
}

// encodeRecord appends payload's record to dst.
func encodeRecord(dst, payload []byte) []byte {
	var h [8]byte
	binary.LittleEndian.PutUint32(h[:4], uint32(len(payload)))
	c := crc32.Update(0, crcTable, h[:4])
	c = crc32.Update(c, crcTable, payload)
	binary.LittleEndian.PutUint32(h[4:], c)
	return append(append(dst, h[:]...), payload...)
}

// openJournal opens the log at path, creating it with header (the
// encoded logHeader) if it does not exist or holds no complete header
// (a crash while it was created, and nothing after it). It checks that
// the log was written for header (sameHeader decides) and returns it
// positioned after its header; replay then reads the records.
func openJournal(path string, header []byte, sameHeader func(old []byte) error) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, badInput("-log: %v", err)
	}
	j := &journal{path: path, f: f}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, badInput("-log %s is in use by another serve process (one log, one writer); stop it first, or give another -log", path)
		}
		return nil, fmt.Errorf("-log %s: locking: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("-log %s: %w", path, err)
	}
	magic := make([]byte, len(journalMagic))
	n, _ := f.ReadAt(magic, 0)
	if !bytes.HasPrefix([]byte(journalMagic), magic[:n]) {
		f.Close()
		return nil, badInput("-log %s is not a serve log (it starts with %q): give the log a serve process wrote, or a new file name", path, clip(magic[:n]))
	}
	var old []byte
	var rerr error = io.EOF
	if n == len(journalMagic) {
		old, rerr = newLogReader(f, st.Size(), int64(n)).next()
	}
	var bad *badRecord
	switch {
	case rerr == nil:
	case errors.As(rerr, &bad) && !bad.torn:
		f.Close()
		return nil, badInput("-log %s: its header record at byte %d is damaged (%v); nothing was read and the file is unchanged. Restore the log from a copy, or move it aside and give a new -log (the nodes it holds would be lost)", path, bad.off, bad)
	case rerr == io.EOF || bad != nil:
		// No complete header, and nothing whole after it: the file was
		// being created when the process stopped, and no request can
		// have been accepted.
		if err := j.create(header); err != nil {
			f.Close()
			return nil, err
		}
		return j, nil
	default:
		f.Close()
		return nil, fmt.Errorf("-log %s: %w", path, rerr)
	}
	if err := sameHeader(old); err != nil {
		f.Close()
		return nil, err
	}
	j.size = int64(len(journalMagic)) + 8 + int64(len(old))
	return j, nil
}

// create writes the magic and the header into the empty (or cut) log and
// syncs it and its folder, so that the log exists before any request is
// accepted into it.
func (j *journal) create(header []byte) error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("-log %s: %w", j.path, err)
	}
	b := encodeRecord([]byte(journalMagic), header)
	if _, err := j.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("-log %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("-log %s: %w", j.path, err)
	}
	if err := syncDir(filepath.Dir(j.path)); err != nil {
		return fmt.Errorf("-log %s: syncing its folder: %w", j.path, err)
	}
	j.size = int64(len(b))
	return nil
}

// badRecord is a record that cannot be read, at byte off: torn when it
// is a torn tail (see the log's doc above), damage otherwise.
type badRecord struct {
	off  int64
	msg  string
	torn bool
}

func (e *badRecord) Error() string { return e.msg }

// logReader reads a log's records in order from r, a file of size bytes.
type logReader struct {
	r    io.ReaderAt
	size int64
	off  int64 // where the next record starts
	br   *bufio.Reader
}

func newLogReader(r io.ReaderAt, size, off int64) *logReader {
	return &logReader{r: r, size: size, off: off, br: bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 1<<16)}
}

// next returns the next record's payload; io.EOF at the end of the file,
// a *badRecord for a record that cannot be read (and then nothing more),
// or the error of reading the file.
func (lr *logReader) next() ([]byte, error) {
	left := lr.size - lr.off
	if left == 0 {
		return nil, io.EOF
	}
	if left < 8 {
		return nil, lr.classify(fmt.Sprintf("%d bytes, less than a record's 8-byte prefix", left), true)
	}
	var h [8]byte
	if _, err := io.ReadFull(lr.br, h[:]); err != nil {
		return nil, err
	}
	length := int64(binary.LittleEndian.Uint32(h[:4]))
	switch {
	case length == 0 || length > maxRecord:
		return nil, lr.classify(fmt.Sprintf("a record length of %d bytes (1 to %d)", length, maxRecord), 8+length > left)
	case 8+length > left:
		return nil, lr.classify(fmt.Sprintf("a record of %d bytes with %d bytes after its prefix", length, left-8), true)
	}
	payload := make([]byte, length)
	if _, err := io.ReadFull(lr.br, payload); err != nil {
		return nil, err
	}
	c := crc32.Update(0, crcTable, h[:4])
	c = crc32.Update(c, crcTable, payload)
	if c != binary.LittleEndian.Uint32(h[4:]) {
		return nil, lr.classify(fmt.Sprintf("a record of %d bytes whose checksum does not match", length), false)
	}
	lr.off += 8 + length
	return payload, nil
}

// classify decides whether the bad record at lr.off, described by msg
// (short: fewer bytes than it needs), is a torn tail or damage.
func (lr *logReader) classify(msg string, short bool) error {
	o, left := lr.off, lr.size-lr.off
	if p, ok := lr.wholeAfter(o); ok {
		return &badRecord{off: o, msg: fmt.Sprintf("%s, and a whole record follows at byte %d", msg, p)}
	}
	if left > 8 {
		var h [8]byte
		if _, err := lr.r.ReadAt(h[:], o); err == nil {
			var l [4]byte
			binary.LittleEndian.PutUint32(l[:], uint32(left-8))
			if left-8 <= maxRecord && lr.crcAt(l[:], o+8, left-8) == binary.LittleEndian.Uint32(h[4:]) {
				return &badRecord{off: o, msg: fmt.Sprintf("%s, but its %d bytes are a whole record: its length field is damaged", msg, left-8)}
			}
		}
	}
	if short {
		return &badRecord{off: o, msg: msg, torn: true}
	}
	var last [1]byte
	if _, err := lr.r.ReadAt(last[:], lr.size-1); err == nil && last[0] == 0 {
		return &badRecord{off: o, msg: msg + ", the file ending in zeros", torn: true}
	}
	return &badRecord{off: o, msg: msg + " (a whole record changed after it was written)"}
}

// wholeAfter returns the first byte after o where a whole record starts:
// a length of 1 to maxRecord that fits in the file and a checksum that
// matches.
func (lr *logReader) wholeAfter(o int64) (int64, bool) {
	const win = 1 << 16
	buf := make([]byte, win+8)
	for base := o + 1; base+9 <= lr.size; base += win {
		n, _ := lr.r.ReadAt(buf[:min(int64(len(buf)), lr.size-base)], base)
		for i := 0; i+8 <= n && i < win; i++ {
			p := base + int64(i)
			l := int64(binary.LittleEndian.Uint32(buf[i:]))
			if l == 0 || l > maxRecord || p+8+l > lr.size {
				continue
			}
			if lr.crcAt(buf[i:i+4], p+8, l) == binary.LittleEndian.Uint32(buf[i+4:]) {
				return p, true
			}
		}
	}
	return 0, false
}

// crcAt is the CRC-32C of the 4 length bytes and the n bytes at off.
func (lr *logReader) crcAt(length []byte, off, n int64) uint32 {
	h := crc32.New(crcTable)
	h.Write(length)
	if _, err := io.Copy(h, io.NewSectionReader(lr.r, off, n)); err != nil {
		return ^h.Sum32() // a read error: no match (a collision is harmless: damage)
	}
	return h.Sum32()
}

// replay reads every record after the header, in order, and gives each
// to apply. A torn tail is dropped: the file is cut back to the records
// before it, and dropped says what was dropped (empty when nothing was).
// Damage anywhere is an error that leaves the file as it was, and so is
// apply's.
func (j *journal) replay(apply func(k int, payload []byte) error) (records int, dropped string, err error) {
	st, err := j.f.Stat()
	if err != nil {
		return 0, "", fmt.Errorf("-log %s: %w", j.path, err)
	}
	lr := newLogReader(j.f, st.Size(), j.size)
	for {
		p, rerr := lr.next()
		if rerr == io.EOF {
			return records, "", nil
		}
		var bad *badRecord
		if errors.As(rerr, &bad) {
			if !bad.torn {
				return records, "", badInput("-log %s: record %d at byte %d: %v: the log is damaged, not cut by a crash (a crash only cuts its last record short); nothing was replayed and the file is unchanged. Restore it from a copy, or move it aside and start with a new -log (the nodes it holds would be lost)", j.path, records+1, bad.off, bad)
			}
			left := st.Size() - j.size
			if err := j.f.Truncate(j.size); err != nil {
				return records, "", fmt.Errorf("-log %s: dropping a torn last record: %w", j.path, err)
			}
			if err := j.f.Sync(); err != nil {
				return records, "", fmt.Errorf("-log %s: %w", j.path, err)
			}
			return records, fmt.Sprintf("-log %s: dropped a torn last record (%d bytes at byte %d: %v), cut by a crash before it was synced; its request was never answered, and the %d records before it are replayed", j.path, left, j.size, bad, records), nil
		}
		if rerr != nil {
			return records, "", fmt.Errorf("-log %s: %w", j.path, rerr)
		}
		if err := apply(records+1, p); err != nil {
			return records, "", err
		}
		records++
		j.size += 8 + int64(len(p))
	}
}

// append writes the records of payloads in one write and fsyncs the log:
// when it returns nil they are on disk. On an error the file is cut back
// to its records before the call, so that nothing half-written stays in
// the log; if even that fails, the journal refuses every later append.
func (j *journal) append(payloads [][]byte) error {
	if j.broken != nil {
		return j.broken
	}
	var buf []byte
	for _, p := range payloads {
		buf = encodeRecord(buf, p)
	}
	if _, err := j.f.Seek(j.size, io.SeekStart); err != nil {
		return j.undo(err)
	}
	if _, err := j.f.Write(buf); err != nil {
		return j.undo(err)
	}
	if err := j.f.Sync(); err != nil {
		return j.undo(err)
	}
	j.size += int64(len(buf))
	return nil
}

func (j *journal) undo(err error) error {
	err = fmt.Errorf("-log %s: %w", j.path, err)
	if terr := j.f.Truncate(j.size); terr != nil {
		j.broken = fmt.Errorf("%w; cutting the log back to its last whole record failed too (%v): no request is accepted until the process is restarted", err, terr)
		return j.broken
	}
	if serr := j.f.Sync(); serr != nil {
		j.broken = fmt.Errorf("%w; syncing the log after cutting it back failed too (%v): no request is accepted until the process is restarted", err, serr)
		return j.broken
	}
	return err
}

func (j *journal) close() error { return j.f.Close() }

// syncDir fsyncs a folder, so that a file created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// clip quotes at most 32 bytes of b.
func clip(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}
