package badgerstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/klauspost/compress/s2"
)

// Packed super columns. Badger's cost is per entry: its log record, its
// memtable node, its share of every compaction. A Super family written one
// entry per subcolumn paid it ten times for a super column of ten
// subcolumns, and a batch of ten such super columns cost Badger five times
// what the same bytes cost as ten entries (BenchmarkSuperBatchCeiling).
// So the subcolumns of a super column of a packed family are kept together,
// as Cassandra kept super columns before 2.0: one entry, the pack, under
// the super column's subcolumn prefix
//
//	row 0x02 enc(super) 0x01                 the pack: every subcolumn
//
// which sorts after the super column's header and before the next super
// column, exactly where its subcolumns' own keys would be. Readers expand a
// pack into its subcolumns, each under its logical key (the prefix and the
// subcolumn's encoded name) and with its record, so a slice, a count or a
// collection sees the cells it saw before, in either direction.
//
// A pack holds at most packMaxCells subcolumns and packMaxBytes bytes,
// none of whose logical keys would have to be cut. A write that would go
// past that dissolves the pack: its subcolumns move to entries of their
// own, and the pack stays as an empty marker that tells the writers of the
// super column to read and write those entries, as in an unpacked family.
// A super column whose own key is too long to leave room for names is
// never packed. Counter families are never packed (a counter update reads
// and writes one cell).
//
// Whether a family is packed is fixed when its data id is made (creation,
// truncation), so the families of a store written before packs keep the
// entry-per-subcolumn layout and everything they stored.
//
// Packs are compressed (S2's block format, a Snappy relative) in families
// whose layout says so, when that saves an eighth or more. Every copy
// Badger makes of a pack (its log record, its memtable node, the tables
// that flushes and compactions write) then moves fewer bytes, and a read
// of a row decompresses fewer blocks; the pack is decompressed where it
// is decoded. Tables are compressed too, block by block, but only once
// the pack has been copied into the log and the memtable, and the block
// cache holds them decompressed.

const (
	// packMarker is the first byte of a pack: every record flag at once,
	// which no record has (a row header is never expiring, a cell never
	// carries a raw row key).
	packMarker byte = 0xff
	// packDissolved: the pack's subcolumns live in entries of their own.
	packDissolved byte = 1
	// packCompressed: what follows the flags is compressed (compressPack).
	packCompressed byte = 2

	// A write into a pack reads and rewrites it, where an entry of its
	// own is written without a read: the bounds keep that cost small
	// (BenchmarkSuperInsertOne: one subcolumn written into packs of 8, 23.5
	// against 18.7 us unpacked; into packs of 40 under bounds of 64 and
	// 16 KiB, 77 against 22 us, most of it Badger compacting the rewritten
	// bytes), while a super column written whole, as batches and most
	// clients write them, still fits.
	packMaxCells = 32
	packMaxBytes = 2 << 10

	// packCompressMin is the smallest pack worth trying to compress.
	packCompressMin = 128
	// packBodyMax bounds what a compressed pack may decompress to, far
	// above any pack a write makes (a write past packMaxBytes dissolves
	// the pack): a corrupt length is refused, not allocated.
	packBodyMax = 16 << 20
)

var errBadPack = errors.New("corrupt pack")

// isPack reports whether a stored value is a pack rather than a record.
func isPack(val []byte) bool { return len(val) > 0 && val[0] == packMarker }

// packCell is one subcolumn of a pack: its encoded name and its encoded
// record. Both alias the buffer the pack was decoded from, or the writer's
// slab.
type packCell struct {
	enc []byte
	rec []byte
}

// decodePack appends the cells of a pack to dst, in comparator order, and
// reports whether it is dissolved. The cells alias val, or, for a
// compressed pack, the buffer it is decompressed into: *body when it has
// the room (else a new one, left in *body), or a new one when body is nil.
func decodePack(val []byte, dst []packCell, body *[]byte) ([]packCell, bool, error) {
	if len(val) < 2 || val[0] != packMarker {
		return dst, false, errBadPack
	}
	if val[1]&^(packDissolved|packCompressed) != 0 {
		return dst, false, errBadPack // flags this engine does not know
	}
	dissolved := val[1]&packDissolved != 0
	src := val[2:]
	if val[1]&packCompressed != 0 {
		n, err := s2.DecodedLen(src)
		if err != nil || n > packBodyMax {
			return dst, false, errBadPack
		}
		var buf []byte
		if body != nil {
			buf = *body
		}
		if src, err = s2.Decode(buf, src); err != nil {
			return dst, false, errBadPack
		}
		if body != nil {
			*body = src
		}
	}
	n, k := binary.Uvarint(src)
	if k <= 0 || n > uint64(len(src)) {
		return dst, false, errBadPack
	}
	src = src[k:]
	var prev []byte
	for i := uint64(0); i < n; i++ {
		var c packCell
		var err error
		if c.enc, src, err = readBytes(src); err != nil || len(c.enc) == 0 {
			return dst, false, errBadPack
		}
		if c.rec, src, err = readBytes(src); err != nil || len(c.rec) < 9 || isPack(c.rec) {
			return dst, false, errBadPack
		}
		if prev != nil && bytes.Compare(prev, c.enc) >= 0 {
			return dst, false, errBadPack
		}
		prev = c.enc
		dst = append(dst, c)
	}
	if len(src) != 0 || (dissolved && n != 0) {
		return dst, false, errBadPack
	}
	return dst, dissolved, nil
}

// packSize bounds the encoded size of a pack of cells (room to encode it).
func packSize(cells []packCell) int {
	n := 2 + binary.MaxVarintLen64
	for _, c := range cells {
		n += 2*binary.MaxVarintLen64 + len(c.enc) + len(c.rec)
	}
	return n
}

// appendPack encodes a pack of cells sorted by encoded name.
func appendPack(dst []byte, cells []packCell, dissolved bool) []byte {
	flags := byte(0)
	if dissolved {
		flags = packDissolved
	}
	dst = append(dst, packMarker, flags)
	dst = binary.AppendUvarint(dst, uint64(len(cells)))
	for _, c := range cells {
		dst = binary.AppendUvarint(dst, uint64(len(c.enc)))
		dst = append(dst, c.enc...)
		dst = binary.AppendUvarint(dst, uint64(len(c.rec)))
		dst = append(dst, c.rec...)
	}
	return dst
}

// packBodyLen is what a compressed pack decompresses to, in bytes; 0 for
// a pack that is not compressed (or not a pack, or corrupt: decodePack
// refuses those).
func packBodyLen(val []byte) int {
	if len(val) < 2 || val[0] != packMarker || val[1]&packCompressed == 0 {
		return 0
	}
	n, err := s2.DecodedLen(val[2:])
	if err != nil || n > packBodyMax {
		return 0
	}
	return n
}

// compressPack returns pack (as appendPack encodes it) compressed into
// dst (grown if it has not the room) if that saves an eighth of its
// cells' bytes or more, else pack. dst must not overlap pack.
func compressPack(dst, pack []byte) []byte {
	body := pack[2:]
	if len(body) < packCompressMin || pack[1]&packCompressed != 0 {
		return pack
	}
	dst = append(slices.Grow(dst[:0], compressRoom(pack)), packMarker, pack[1]|packCompressed)
	comp := s2.Encode(dst[len(dst):cap(dst)], body)
	if len(comp) > len(body)-len(body)/8 {
		return pack
	}
	return dst[:len(dst)+len(comp)]
}

// compressRoom is the room compressPack may need for pack.
func compressRoom(pack []byte) int { return 2 + s2.MaxEncodedLen(len(pack)-2) }

// packBufKeep bounds the buffers a writer keeps to encode and compress
// packs in, which packMaxBytes keeps far smaller.
const packBufKeep = 64 << 10

// findPackCell returns the index of the cell named enc, or where it would
// go, and whether it is there.
func findPackCell(cells []packCell, enc []byte) (int, bool) {
	return slices.BinarySearchFunc(cells, enc, func(c packCell, k []byte) int { return bytes.Compare(c.enc, k) })
}

// findPackCellNear is findPackCell for a writer that puts cells mostly in
// their order, as a batch puts a super column's subcolumns: it tries
// index near (just after the previous cell the writer put) with at most
// two comparisons before it searches. Finding the place of each of a
// super batch's 100 subcolumns by search alone was 6% of thriftd's CPU.
func findPackCellNear(cells []packCell, enc []byte, near int) (int, bool) {
	if near >= 0 && near <= len(cells) && (near == 0 || bytes.Compare(cells[near-1].enc, enc) < 0) {
		if near == len(cells) {
			return near, false
		}
		if c := bytes.Compare(cells[near].enc, enc); c >= 0 {
			return near, c == 0
		}
	}
	return findPackCell(cells, enc)
}

// packable reports whether a subcolumn whose logical key is the pack key
// followed by enc may live in a pack: its key would not have to be cut.
func packable(packKey, enc []byte) bool {
	return len(packKey)+len(enc) <= truncatedLen
}
