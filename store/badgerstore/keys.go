package badgerstore

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/thriftbridge/thriftbridge/store"
)

// Namespaces: the first byte of every key.
const (
	nsSchema byte = 0x01
	nsData   byte = 0x02
	// nsCAS holds short-lived sentinel keys that serialise conditional
	// updates of a row (see ApplyIf).
	nsCAS byte = 0x03
)

// Schema sub-namespaces.
const (
	schemaKeyspace byte = 'k'
	schemaMeta     byte = 'm'
)

// Kinds: the byte after a row prefix.
const (
	kindRowHeader byte = 0x00
	kindRanges    byte = 0x01
	kindCells     byte = 0x02
)

// Markers after a super column name.
const (
	superHeader byte = 0x00
	superCells  byte = 0x01
)

const (
	// maxKey is Badger's key size limit.
	maxKey = 65000
	// hashLen is the length of the hash that completes a cut key.
	hashLen = 8
	// truncatedLen is how much of an overlong key is kept verbatim.
	truncatedLen = maxKey - hashLen
	// maxRowPrefix caps the row part of a key so that long row keys still
	// leave room for names.
	maxRowPrefix = 24 << 10
	// tablePrefixLen is namespace + data id.
	tablePrefixLen = 5
)

// tableState is what the engine keeps with every store.Table it publishes
// (Table.Backend): where the family's data lives.
type tableState struct {
	// dataID is the storage prefix of the family's data. It changes when
	// the family is truncated, so old data vanishes atomically, and
	// requests that still hold the table from an older catalog keep
	// reading and writing the data they started with.
	dataID uint32
	// packed: the subcolumns of each super column are kept in one entry
	// (pack.go).
	packed bool
	// marked: a packed family whose rows with packs have a mark
	// (rowmark.go).
	marked bool
	// compressed: a packed family that compresses its packs (pack.go).
	compressed bool
	// rowPacked: a packed, marked family that keeps small rows in row
	// packs (rowpack.go).
	rowPacked bool
	// imaged: a read put the image of one of the family's rows, or a
	// mark, in the cell cache (row_image.go); until then reads do not
	// look for one.
	imaged atomic.Bool
	// namesImages decides whether reads of names take images.
	namesImages imagePayoff
}

// familyLayout is what a family's data id holds beyond the first layout.
type familyLayout struct {
	packed, marked, compressed, rowPacked bool
}

// newTable resolves a persisted family definition stored under dataID,
// with the parts of layout that a family of its kind can have.
func newTable(def store.TableDef, dataID uint32, layout familyLayout) (*store.Table, error) {
	t, err := store.NewTable(def)
	if err != nil {
		return nil, err
	}
	packed := layout.packed && def.Super && !t.Counter
	marked := packed && layout.marked
	t.Backend = &tableState{dataID: dataID, packed: packed, marked: marked,
		compressed: packed && layout.compressed, rowPacked: marked && layout.rowPacked}
	return t, nil
}

// packedTable reports whether a family keeps its super columns in packs.
func packedTable(t *store.Table) bool {
	return t.Backend.(*tableState).packed
}

// markedTable reports whether a packed family marks its rows with packs.
func markedTable(t *store.Table) bool {
	return t.Backend.(*tableState).marked
}

// compressedTable reports whether a packed family compresses its packs.
func compressedTable(t *store.Table) bool {
	return t.Backend.(*tableState).compressed
}

// dataIDOf is the data id of a family this engine published (checkTable
// has accepted it).
func dataIDOf(t *store.Table) uint32 {
	return t.Backend.(*tableState).dataID
}

// checkTable refuses a table this engine did not publish (one built by
// store.NewTable, or another engine's): the Engine contract takes tables
// from the engine's own catalog.
func checkTable(t *store.Table) error {
	if t == nil {
		return fmt.Errorf("no table: %w", store.ErrNoTable)
	}
	if _, ok := t.Backend.(*tableState); !ok {
		return fmt.Errorf("table %s.%s does not come from this engine's catalog: %w", t.Def.Keyspace, t.Def.Name, store.ErrNoTable)
	}
	return nil
}

// appendTablePrefix appends the data namespace prefix of a family.
func appendTablePrefix(dst []byte, dataID uint32) []byte {
	dst = append(dst, nsData)
	return binary.BigEndian.AppendUint32(dst, dataID)
}

// rowPrefix builds the key prefix of a row and reports whether the row key
// was too long to be kept whole in it.
func (e *Engine) rowPrefix(dst []byte, t *store.Table, key []byte) (prefix []byte, cut bool) {
	dst = appendTablePrefix(dst, dataIDOf(t))
	start := len(dst)
	dst = e.part.AppendRowKey(dst, key)
	if len(dst)-start+tablePrefixLen < maxRowPrefix {
		return dst, false
	}
	// A cut prefix has exactly maxRowPrefix bytes and ends in hash bytes
	// with their high bit set: they contain no 0x00, so no escape
	// terminator, and the prefix never decodes as a row key (that is how
	// a scan tells it from an uncut one).
	sum := sha256.Sum256(dst[start:])
	dst = dst[:start+maxRowPrefix-tablePrefixLen-hashLen]
	for _, b := range sum[:hashLen] {
		dst = append(dst, b|0x80)
	}
	return dst, true
}

// finishKey cuts an overlong key to truncatedLen bytes plus a hash of the
// whole, in place, and reports whether it did.
func finishKey(k []byte) ([]byte, bool) {
	if len(k) <= maxKey {
		return k, false
	}
	sum := sha256.Sum256(k)
	return append(k[:truncatedLen], sum[:hashLen]...), true
}

// mayTie reports whether a key is long enough to belong to a tie group.
func mayTie(k []byte) bool { return len(k) > truncatedLen }

// sameTieGroup reports whether two long keys belong to one tie group.
func sameTieGroup(a, b []byte) bool {
	return mayTie(a) && mayTie(b) && string(a[:truncatedLen]) == string(b[:truncatedLen])
}

// seekKey turns a logical bound key into the physical key to seek to: a
// bound longer than a key can be seeks to the start of its tie group.
func seekKey(k []byte) []byte {
	if len(k) > truncatedLen {
		return k[:truncatedLen]
	}
	return k
}
