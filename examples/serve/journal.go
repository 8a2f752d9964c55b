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
// crash (kill -9, power loss) can only leave the last record cut or
// unsynced: at start-up a bad record whose extent reaches the end of the
// file (or a tail of zero bytes) is such a torn record, dropped (the file
// is cut back to the record before it) and reported; its request was
// never answered. A bad record with data after it is damage, not a crash:
// the log is refused, nothing replayed.

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
// (a crash while it was created). It checks that the log was written for
// header (sameHeader decides) and returns it positioned after its header;
// replay then reads the records.
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
	br := bufio.NewReaderSize(f, 1<<16)
	magic := make([]byte, len(journalMagic))
	n, _ := io.ReadFull(br, magic)
	if !bytes.HasPrefix([]byte(journalMagic), magic[:n]) {
		f.Close()
		return nil, badInput("-log %s is not a serve log (it starts with %q): give the log a serve process wrote, or a new file name", path, clip(magic[:n]))
	}
	old, rerr := readRecord(br, st.Size()-int64(n))
	if n < len(journalMagic) || rerr != nil {
		if n == len(journalMagic) && rerr != nil && !rerr.torn {
			f.Close()
			return nil, badInput("-log %s: its header record is damaged (%v) and data follows it: restore the log from a copy, or give a new file name", path, rerr)
		}
		// No complete header: the file was being created when the
		// process stopped, and no request can have been accepted.
		if err := j.create(header); err != nil {
			f.Close()
			return nil, err
		}
		return j, nil
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

// recordError is a record that cannot be read; torn when it is the
// file's last (a crash cut it) rather than damage.
type recordError struct {
	msg  string
	torn bool
}

func (e *recordError) Error() string { return e.msg }

// readRecord reads the next record from r, which has left bytes to its
// end.
func readRecord(r *bufio.Reader, left int64) ([]byte, *recordError) {
	if left < 8 {
		if left == 0 {
			return nil, &recordError{msg: "no record", torn: true}
		}
		return nil, &recordError{msg: fmt.Sprintf("%d bytes, less than a record's 8-byte prefix", left), torn: true}
	}
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, &recordError{msg: err.Error(), torn: true}
	}
	length := int64(binary.LittleEndian.Uint32(h[:4]))
	if length == 0 || length > maxRecord || 8+length > left {
		// A length beyond the file is a record cut short, or the
		// garbage of an unsynced tail; a zero or absurd one within it
		// is a tail of zeros or damage.
		if 8+length >= left || allZero(r, h[:], left) {
			return nil, &recordError{msg: fmt.Sprintf("a record of %d bytes cut at %d", length, left-8), torn: true}
		}
		return nil, &recordError{msg: fmt.Sprintf("a record length of %d bytes", length)}
	}
	payload := make([]byte, length)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, &recordError{msg: err.Error(), torn: true}
	}
	c := crc32.Update(0, crcTable, h[:4])
	c = crc32.Update(c, crcTable, payload)
	if c != binary.LittleEndian.Uint32(h[4:]) {
		return nil, &recordError{msg: fmt.Sprintf("a record of %d bytes whose checksum does not match", length), torn: 8+length == left}
	}
	return payload, nil
}

// allZero reports whether the rest of the file (h, then r's left−8
// bytes) is zeros: a tail the file system extended but never wrote.
func allZero(r *bufio.Reader, h []byte, left int64) bool {
	for _, b := range h {
		if b != 0 {
			return false
		}
	}
	buf := make([]byte, 1<<16)
	for rest := left - int64(len(h)); rest > 0; {
		n, err := r.Read(buf[:min(int64(len(buf)), rest)])
		for _, b := range buf[:n] {
			if b != 0 {
				return false
			}
		}
		rest -= int64(n)
		if err != nil {
			return rest == 0
		}
	}
	return true
}

// replay reads every record after the header, in order, and gives each
// to apply. A torn last record is dropped: the file is cut back to the
// records before it, and dropped says what was dropped (empty when
// nothing was). Damage before the end is an error, and so is apply's.
func (j *journal) replay(apply func(k int, payload []byte) error) (records int, dropped string, err error) {
	st, err := j.f.Stat()
	if err != nil {
		return 0, "", fmt.Errorf("-log %s: %w", j.path, err)
	}
	if _, err := j.f.Seek(j.size, io.SeekStart); err != nil {
		return 0, "", fmt.Errorf("-log %s: %w", j.path, err)
	}
	br := bufio.NewReaderSize(j.f, 1<<16)
	for {
		left := st.Size() - j.size
		if left == 0 {
			return records, "", nil
		}
		p, rerr := readRecord(br, left)
		if rerr != nil {
			if !rerr.torn {
				return records, "", badInput("-log %s: record %d at byte %d: %v, with data after it: the log is damaged, not cut by a crash; nothing was replayed. Restore it from a copy, or move it aside and start with a new -log (the nodes it holds would be lost)", j.path, records+1, j.size, rerr)
			}
			if err := j.f.Truncate(j.size); err != nil {
				return records, "", fmt.Errorf("-log %s: dropping a torn last record: %w", j.path, err)
			}
			if err := j.f.Sync(); err != nil {
				return records, "", fmt.Errorf("-log %s: %w", j.path, err)
			}
			return records, fmt.Sprintf("-log %s: dropped a torn last record (%d bytes at byte %d: %v), cut by a crash before it was synced; its request was never answered, and the %d records before it are replayed", j.path, left, j.size, rerr, records), nil
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
