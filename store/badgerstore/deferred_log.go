package badgerstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/thriftbridge/thriftbridge/store"
)

// The deferred writes' log (deferred.go). A small write is acknowledged
// once its record is in this log and applied to Badger later; the log
// keeps it through a crash of the process until Badger has it.
//
// The log is one file of deferredLogSize bytes in the data directory,
// mapped into memory: a record copied into the mapping is in the page
// cache, so it survives a kill -9 of the process as Badger's own
// memtable log does, and it reaches the disk with the periodic sync
// (msync). Records follow one another from the start of the file:
//
//	length  uint32   bytes of the payload
//	crc     uint32   CRC-32C of the sequence number and the payload
//	seq     uint64   the record's number, one more than the record before
//	payload          the row mutations (appendDeferred)
//
// A record is written whole, under the log's lock, before its write is
// acknowledged, so a crash can tear only the last record, which was never
// acknowledged: reading stops at the first record whose length, checksum
// or number does not follow. When the file is full the engine waits until
// every record has been applied and starts again from the beginning;
// what is left of older records after the newest ones has lower numbers
// and stops the reading.

const (
	deferredLogName   = "thriftd-deferred.log"
	deferredLogSize   = 8 << 20
	deferredRecordHdr = 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// deferredLog is the mapped log file.
type deferredLog struct {
	f    *os.File
	data []byte
	off  int // where the next record goes
}

// openDeferredLog opens (creating it if needed) the log in dir.
func openDeferredLog(dir string) (*deferredLog, error) {
	path := filepath.Join(dir, deferredLogName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open deferred writes' log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open deferred writes' log: %w", err)
	}
	if st.Size() != deferredLogSize {
		// A shorter file is one whose creation a crash interrupted: it
		// is read as far as it goes, the rest reads as zeros.
		if err := f.Truncate(deferredLogSize); err != nil {
			f.Close()
			return nil, fmt.Errorf("size deferred writes' log %s: %w", path, err)
		}
	}
	data, err := unix.Mmap(int(f.Fd()), 0, deferredLogSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("map deferred writes' log %s: %w", path, err)
	}
	return &deferredLog{f: f, data: data}, nil
}

// records calls fn with each whole record after the one numbered after,
// in order, from the start of the file; a payload is valid until the log
// is written again.
func (l *deferredLog) records(after uint64, fn func(seq uint64, payload []byte) error) error {
	off, prev := 0, uint64(0)
	for off+deferredRecordHdr <= len(l.data) {
		n := int(binary.LittleEndian.Uint32(l.data[off:]))
		sum := binary.LittleEndian.Uint32(l.data[off+4:])
		if n == 0 || n > len(l.data)-off-deferredRecordHdr {
			return nil
		}
		body := l.data[off+8 : off+deferredRecordHdr+n]
		if crc32.Checksum(body, castagnoli) != sum {
			return nil
		}
		seq := binary.LittleEndian.Uint64(body)
		if prev != 0 && seq != prev+1 {
			return nil
		}
		prev = seq
		if seq > after {
			if err := fn(seq, body[8:]); err != nil {
				return err
			}
		}
		off += deferredRecordHdr + n
	}
	return nil
}

// fits reports whether a record of n payload bytes fits after the last.
func (l *deferredLog) fits(n int) bool {
	return l.off+deferredRecordHdr+n <= len(l.data)
}

// append writes a record; the caller checked that it fits.
func (l *deferredLog) append(seq uint64, payload []byte) {
	rec := l.data[l.off : l.off+deferredRecordHdr+len(payload)]
	binary.LittleEndian.PutUint64(rec[8:], seq)
	copy(rec[deferredRecordHdr:], payload)
	sum := crc32.Checksum(rec[8:], castagnoli)
	binary.LittleEndian.PutUint32(rec[4:], sum)
	binary.LittleEndian.PutUint32(rec, uint32(len(payload)))
	l.off += len(rec)
}

// restart makes the next record the first of the file; the caller knows
// that every record has been applied.
func (l *deferredLog) restart() {
	clear(l.data[:deferredRecordHdr])
	l.off = 0
}

// sync writes the mapped pages to the disk.
func (l *deferredLog) sync() error {
	if err := unix.Msync(l.data, unix.MS_SYNC); err != nil {
		return fmt.Errorf("sync deferred writes' log: %w", err)
	}
	return nil
}

// close unmaps and closes the file.
func (l *deferredLog) close() error {
	err := unix.Munmap(l.data)
	l.data = nil
	return errors.Join(err, l.f.Close())
}

// Payload of a record: the engine clock (Unix microseconds) and the wall
// clock (Unix seconds) when the write was acknowledged (a TTL counts from
// then, a counter add takes its timestamp then), then its row mutations, each
// with the data id of its family (a family truncated or dropped since has
// another, and the mutation is not replayed into it).

// Presence bits of an operation's optional byte fields: nil and empty
// differ (a nil Super is a Standard family's cell).
const (
	opHasSuper = 1 << iota
	opHasName
	opHasValue
	opHasStart
	opHasFinish
	opHasTimestamp
)

// appendDeferred appends the payload of rows acknowledged at now.
func appendDeferred(dst []byte, nowMicro, realNow int64, rows []store.RowMutation) []byte {
	dst = binary.AppendVarint(dst, nowMicro)
	dst = binary.AppendVarint(dst, realNow)
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for i := range rows {
		m := &rows[i]
		dst = binary.LittleEndian.AppendUint32(dst, dataIDOf(m.Table))
		dst = appendBytes(dst, m.Key)
		dst = binary.AppendUvarint(dst, uint64(len(m.Ops)))
		for j := range m.Ops {
			op := &m.Ops[j]
			var bits byte
			for k, present := range [...]bool{op.Super != nil, op.Name != nil, op.Value != nil, op.Start != nil, op.Finish != nil, op.HasTimestamp} {
				if present {
					bits |= 1 << k
				}
			}
			dst = append(dst, byte(op.Kind), bits)
			for _, b := range [...][]byte{op.Super, op.Name, op.Value, op.Start, op.Finish} {
				if b != nil {
					dst = appendBytes(dst, b)
				}
			}
			dst = binary.AppendVarint(dst, op.Timestamp)
			dst = binary.AppendVarint(dst, int64(op.TTL))
			dst = binary.AppendVarint(dst, op.Delta)
		}
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// deferredRows is a decoded payload; its byte fields point into it.
type deferredRows struct {
	nowMicro int64
	realNow  int64
	rows     []store.RowMutation
	dataIDs  []uint32
	ops      []store.Op
}

var errDeferredPayload = errors.New("deferred write record is damaged")

// decode reads a payload into d, reusing its slices; the rows' tables are
// left nil for the caller.
func (d *deferredRows) decode(p []byte) error {
	r := payloadReader{p: p}
	d.nowMicro = r.varint()
	d.realNow = r.varint()
	n := r.count()
	d.rows, d.dataIDs, d.ops = d.rows[:0], d.dataIDs[:0], d.ops[:0]
	type span struct{ first, n int }
	spans := make([]span, 0, 4)
	for i := 0; i < n && r.err == nil; i++ {
		d.dataIDs = append(d.dataIDs, r.u32())
		d.rows = append(d.rows, store.RowMutation{Key: r.bytes()})
		nops := r.count()
		spans = append(spans, span{len(d.ops), nops})
		for j := 0; j < nops && r.err == nil; j++ {
			kind, bits := store.OpKind(r.byte()), r.byte()
			op := store.Op{Kind: kind, HasTimestamp: bits&opHasTimestamp != 0}
			for k, f := range [...]*[]byte{&op.Super, &op.Name, &op.Value, &op.Start, &op.Finish} {
				if bits&(1<<k) != 0 {
					*f = r.bytes()
				}
			}
			op.Timestamp = r.varint()
			ttl := r.varint()
			op.TTL = int32(ttl)
			if int64(op.TTL) != ttl {
				r.fail()
			}
			op.Delta = r.varint()
			d.ops = append(d.ops, op)
		}
	}
	if r.err == nil && len(r.p) != 0 {
		r.fail()
	}
	if r.err != nil {
		return r.err
	}
	// The operations are sliced once they no longer move.
	for i, s := range spans {
		d.rows[i].Ops = d.ops[s.first : s.first+s.n : s.first+s.n]
	}
	return nil
}

// payloadReader reads a payload; the first error sticks.
type payloadReader struct {
	p   []byte
	err error
}

func (r *payloadReader) fail() {
	if r.err == nil {
		r.err = errDeferredPayload
	}
	r.p = nil
}

func (r *payloadReader) byte() byte {
	if len(r.p) < 1 {
		r.fail()
		return 0
	}
	b := r.p[0]
	r.p = r.p[1:]
	return b
}

func (r *payloadReader) u32() uint32 {
	if len(r.p) < 4 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(r.p)
	r.p = r.p[4:]
	return v
}

func (r *payloadReader) varint() int64 {
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.p = r.p[n:]
	return v
}

// count reads a number of items, each at least one byte long.
func (r *payloadReader) count() int {
	v, n := binary.Uvarint(r.p)
	if n <= 0 || v > uint64(len(r.p)-n) {
		r.fail()
		return 0
	}
	r.p = r.p[n:]
	return int(v)
}

func (r *payloadReader) bytes() []byte {
	v, n := binary.Uvarint(r.p)
	if n <= 0 || v > uint64(len(r.p)-n) {
		r.fail()
		return nil
	}
	b := r.p[n : n+int(v) : n+int(v)]
	r.p = r.p[n+int(v):]
	return b
}
