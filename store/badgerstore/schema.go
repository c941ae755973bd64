package badgerstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// keyspaceDoc is how a keyspace is persisted: one JSON document per
// keyspace under 0x01 'k' <name>.
type keyspaceDoc struct {
	Def    store.KeyspaceDef `json:"def"`
	Tables []tableDoc        `json:"tables"`
}

type tableDoc struct {
	Def    store.TableDef `json:"def"`
	DataID uint32         `json:"data_id"`
	// Packed: the family keeps each super column's subcolumns in one
	// entry (pack.go); families stored before packs existed have not.
	Packed bool `json:"packed,omitempty"`
	// RowMarks: the packed family marks each row that has packs
	// (rowmark.go); packed families stored before marks existed do not.
	RowMarks bool `json:"row_marks,omitempty"`
	// CompressedPacks: the packed family compresses its packs (pack.go);
	// packed families stored before compression existed do not.
	CompressedPacks bool `json:"compressed_packs,omitempty"`
	// RowPacks: the packed, marked family keeps small rows in row packs
	// (rowpack.go); families stored before row packs existed do not.
	RowPacks bool `json:"row_packs,omitempty"`
}

// layout is the layout of the family's data id.
func (d *tableDoc) layout() familyLayout {
	return familyLayout{packed: d.Packed, marked: d.RowMarks, compressed: d.CompressedPacks, rowPacked: d.RowPacks}
}

// metaDoc holds the engine's sequences and the data still to be dropped.
type metaDoc struct {
	NextTableID int32    `json:"next_table_id"`
	NextDataID  uint32   `json:"next_data_id"`
	PendingDrop []uint32 `json:"pending_drop,omitempty"`
	// PendingPrefixes are other key prefixes to drop (dropped indexes).
	PendingPrefixes [][]byte `json:"pending_prefixes,omitempty"`
	// Format is the newest layout the store holds data in (0: the first).
	Format int `json:"format,omitempty"`
}

// Layouts of the data, in the order they appeared. An engine opens a store
// up to storeFormat and refuses a newer one, whose data it would misread.
const (
	// formatPacks: Super families may keep super columns in packs
	// (pack.go).
	formatPacks = 1
	// formatRowMarks: packed families may mark their rows (rowmark.go).
	// An engine that knows no marks would write packs without them, and
	// a later one would then take those rows for empty.
	formatRowMarks = 2
	// formatCompressedPacks: packs may be compressed (pack.go), which an
	// engine that knows no compression would refuse as corrupt.
	formatCompressedPacks = 3
	// formatRowPacks: rows may be kept in row packs (rowpack.go), which
	// an engine that knows none would take for a pack of a super column
	// without a name.
	formatRowPacks = 4
	storeFormat    = formatRowPacks
)

var metaKey = []byte{nsSchema, schemaMeta, 's', 'e', 'q'}

func keyspaceKey(name string) []byte {
	return append([]byte{nsSchema, schemaKeyspace}, name...)
}

// loadCatalog reads the persisted schema and publishes it.
func (e *Engine) loadCatalog(ctx context.Context) error {
	docs := map[string]*keyspaceDoc{}
	err := e.db.View(func(txn *badger.Txn) error {
		var meta metaDoc
		if err := readJSON(txn, metaKey, &meta); err != nil {
			return err
		}
		if meta.Format > storeFormat {
			return fmt.Errorf("the data is in layout %d, written by a newer thriftd; this one reads layouts up to %d", meta.Format, storeFormat)
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsSchema, schemaKeyspace}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var d keyspaceDoc
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &d) }); err != nil {
				return fmt.Errorf("decode keyspace %q: %w", it.Item().Key()[2:], err)
			}
			docs[d.Def.Name] = &d
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load schema: %w", err)
	}
	cat, err := buildCatalog(docs)
	if err != nil {
		return fmt.Errorf("load schema: %w", err)
	}
	e.catalog.Store(cat)
	return nil
}

// buildCatalog resolves persisted documents into a Catalog.
func buildCatalog(docs map[string]*keyspaceDoc) (*store.Catalog, error) {
	cat := &store.Catalog{Keyspaces: make(map[string]*store.Keyspace, len(docs))}
	h := sha256.New()
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := docs[n]
		ks := &store.Keyspace{Def: d.Def, Tables: make(map[string]*store.Table, len(d.Tables))}
		for _, td := range d.Tables {
			t, err := newTable(td.Def, td.DataID, td.layout())
			if err != nil {
				return nil, err
			}
			ks.Tables[td.Def.Name] = t
		}
		cat.Keyspaces[n] = ks
		b, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		h.Write(b)
	}
	cat.Version = versionUUID(h.Sum(nil))
	return cat, nil
}

// versionUUID formats a digest as a name-based (version 5 layout) UUID.
func versionUUID(sum []byte) string {
	var u [16]byte
	copy(u[:], sum)
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	s := hex.EncodeToString(u[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}

// schemaChange runs fn on a private copy of the persisted schema and, if fn
// succeeds, persists every changed keyspace and the metadata in one
// transaction and publishes the new catalog.
func (e *Engine) schemaChange(ctx context.Context, fn func(c *schemaTxn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.schemaMu.Lock()
	defer e.schemaMu.Unlock()
	if err := e.settleAll(ctx); err != nil {
		return err
	}

	c := &schemaTxn{docs: map[string]*keyspaceDoc{}, changed: map[string]bool{}, newLayout: e.newFamilyLayout()}
	err := e.db.View(func(txn *badger.Txn) error {
		if err := readJSON(txn, metaKey, &c.meta); err != nil {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsSchema, schemaKeyspace}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var d keyspaceDoc
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &d) }); err != nil {
				return err
			}
			c.docs[d.Def.Name] = &d
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if c.meta.NextTableID == 0 {
		c.meta.NextTableID = 1000
	}
	if c.meta.NextDataID == 0 {
		c.meta.NextDataID = 1
	}
	firstNew := c.meta.NextDataID
	if err := fn(c); err != nil {
		return err
	}
	cat, err := buildCatalog(c.docs)
	if err != nil {
		return err
	}
	err = retryWrites(ctx, func() error {
		return e.update(func(txn *badger.Txn) error {
			for name := range c.changed {
				d, ok := c.docs[name]
				if !ok {
					if err := txn.Delete(keyspaceKey(name)); err != nil {
						return err
					}
					continue
				}
				b, err := json.Marshal(d)
				if err != nil {
					return err
				}
				if err := txn.Set(keyspaceKey(name), b); err != nil {
					return err
				}
			}
			b, err := json.Marshal(&c.meta)
			if err != nil {
				return err
			}
			return txn.Set(metaKey, b)
		})
	})
	if err != nil {
		return fmt.Errorf("persist schema: %w", err)
	}
	if err := e.db.Sync(); err != nil {
		return fmt.Errorf("sync schema: %w", err)
	}
	// Families created or truncated here get their key filters before
	// a writer can take them.
	e.publishKeyFilters(cat, firstNew)
	e.catalog.Store(cat)
	if len(c.meta.PendingDrop) > 0 || len(c.meta.PendingPrefixes) > 0 {
		e.kickDrops()
	}
	return nil
}

func readJSON(txn *badger.Txn, key []byte, v any) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

// schemaTxn is a schema change in progress.
type schemaTxn struct {
	docs    map[string]*keyspaceDoc
	changed map[string]bool
	meta    metaDoc
	// newLayout is the layout of new and truncated families.
	newLayout familyLayout
}

// noteLayout records in the store's metadata the layout of a family it
// creates or truncates, and returns the family's document.
func (c *schemaTxn) noteLayout(def store.TableDef, dataID uint32, t *store.Table) tableDoc {
	doc := tableDoc{Def: def, DataID: dataID, Packed: packedTable(t), RowMarks: markedTable(t),
		CompressedPacks: compressedTable(t), RowPacks: rowPackedTable(t)}
	if doc.Packed {
		c.meta.Format = max(c.meta.Format, formatPacks)
	}
	if doc.RowMarks {
		c.meta.Format = max(c.meta.Format, formatRowMarks)
	}
	if doc.CompressedPacks {
		c.meta.Format = max(c.meta.Format, formatCompressedPacks)
	}
	if doc.RowPacks {
		c.meta.Format = max(c.meta.Format, formatRowPacks)
	}
	return doc
}

func (c *schemaTxn) keyspace(name string) (*keyspaceDoc, error) {
	d, ok := c.docs[name]
	if !ok {
		return nil, fmt.Errorf("keyspace %q: %w", name, store.ErrNoKeyspace)
	}
	return d, nil
}

func (c *schemaTxn) newDataID() uint32 {
	id := c.meta.NextDataID
	c.meta.NextDataID++
	return id
}

// addTable validates and appends a family to a keyspace document.
func (c *schemaTxn) addTable(d *keyspaceDoc, def store.TableDef) error {
	for _, t := range d.Tables {
		if t.Def.Name == def.Name {
			return fmt.Errorf("table %q in keyspace %q: %w", def.Name, d.Def.Name, store.ErrExists)
		}
	}
	def.Keyspace = d.Def.Name
	def.ID = c.meta.NextTableID
	c.meta.NextTableID++
	dataID := c.newDataID()
	t, err := newTable(def, dataID, c.newLayout)
	if err != nil {
		return err
	}
	d.Tables = append(d.Tables, c.noteLayout(def, dataID, t))
	c.changed[d.Def.Name] = true
	return nil
}

func (c *schemaTxn) tableIndex(d *keyspaceDoc, name string) (int, error) {
	for i, t := range d.Tables {
		if t.Def.Name == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("table %q in keyspace %q: %w", name, d.Def.Name, store.ErrNoTable)
}

// CreateKeyspace implements store.Engine.
func (e *Engine) CreateKeyspace(ctx context.Context, ks store.KeyspaceDef, tables []store.TableDef) error {
	return e.schemaChange(ctx, func(c *schemaTxn) error {
		for n := range c.docs {
			if strings.EqualFold(n, ks.Name) {
				return fmt.Errorf("keyspace %q conflicts with %q: %w", ks.Name, n, store.ErrExists)
			}
		}
		d := &keyspaceDoc{Def: ks}
		c.docs[ks.Name] = d
		c.changed[ks.Name] = true
		for _, t := range tables {
			if err := c.addTable(d, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateKeyspace implements store.Engine.
func (e *Engine) UpdateKeyspace(ctx context.Context, ks store.KeyspaceDef) error {
	return e.schemaChange(ctx, func(c *schemaTxn) error {
		d, err := c.keyspace(ks.Name)
		if err != nil {
			return err
		}
		d.Def = ks
		c.changed[ks.Name] = true
		return nil
	})
}

// DropKeyspace implements store.Engine.
func (e *Engine) DropKeyspace(ctx context.Context, name string) error {
	return e.schemaChange(ctx, func(c *schemaTxn) error {
		d, err := c.keyspace(name)
		if err != nil {
			return err
		}
		for _, t := range d.Tables {
			c.meta.PendingDrop = append(c.meta.PendingDrop, t.DataID)
		}
		delete(c.docs, name)
		c.changed[name] = true
		return nil
	})
}

// CreateTable implements store.Engine.
func (e *Engine) CreateTable(ctx context.Context, def store.TableDef) error {
	return e.schemaChange(ctx, func(c *schemaTxn) error {
		d, err := c.keyspace(def.Keyspace)
		if err != nil {
			return err
		}
		return c.addTable(d, def)
	})
}

// UpdateTable implements store.Engine. It refuses, with an
// *store.IncompatibleChangeError, a change the stored data could not be
// read back under (store.CheckTableChange): the keys already written are
// encodings of the old comparators. Columns that gain an index get it
// built from the data already there; columns that lose one have their
// entries dropped.
func (e *Engine) UpdateTable(ctx context.Context, def store.TableDef) error {
	old, _ := e.Catalog().Table(def.Keyspace, def.Name)
	err := e.schemaChange(ctx, func(c *schemaTxn) error {
		d, err := c.keyspace(def.Keyspace)
		if err != nil {
			return err
		}
		i, err := c.tableIndex(d, def.Name)
		if err != nil {
			return err
		}
		def.ID = d.Tables[i].Def.ID
		next, err := newTable(def, d.Tables[i].DataID, d.Tables[i].layout())
		if err != nil {
			return err
		}
		// Checked against the definition as persisted, under the schema
		// lock: the one the stored data was written with.
		current, err := newTable(d.Tables[i].Def, d.Tables[i].DataID, d.Tables[i].layout())
		if err != nil {
			return err
		}
		if err := store.CheckTableChange(current, next, sameKeyEncoding); err != nil {
			return err
		}
		if old != nil {
			for _, col := range old.IndexedColumns() {
				if !next.IndexedColumn(col) {
					c.meta.PendingPrefixes = append(c.meta.PendingPrefixes, indexPrefix(nil, old, col))
				}
			}
		}
		d.Tables[i].Def = def
		c.changed[d.Def.Name] = true
		return nil
	})
	if err != nil {
		return err
	}
	next, ok := e.Catalog().Table(def.Keyspace, def.Name)
	if !ok {
		return nil
	}
	var added [][]byte
	for _, col := range next.IndexedColumns() {
		if old == nil || !old.IndexedColumn(col) {
			added = append(added, col)
		}
	}
	return e.buildIndexes(ctx, next, added)
}

// DropTable implements store.Engine.
func (e *Engine) DropTable(ctx context.Context, keyspace, name string) error {
	return e.schemaChange(ctx, func(c *schemaTxn) error {
		d, err := c.keyspace(keyspace)
		if err != nil {
			return err
		}
		i, err := c.tableIndex(d, name)
		if err != nil {
			return err
		}
		c.meta.PendingDrop = append(c.meta.PendingDrop, d.Tables[i].DataID)
		d.Tables = append(d.Tables[:i], d.Tables[i+1:]...)
		c.changed[keyspace] = true
		return nil
	})
}

// Truncate implements store.Engine: the family gets a fresh data id, so its
// old rows vanish at once; their keys are dropped in the background.
func (e *Engine) Truncate(ctx context.Context, keyspace, name string) error {
	return e.schemaChange(ctx, func(c *schemaTxn) error {
		d, err := c.keyspace(keyspace)
		if err != nil {
			return err
		}
		i, err := c.tableIndex(d, name)
		if err != nil {
			return err
		}
		c.meta.PendingDrop = append(c.meta.PendingDrop, d.Tables[i].DataID)
		d.Tables[i].DataID = c.newDataID()
		// The family is empty under its new data id: it takes the
		// engine's layout for new families.
		t, err := newTable(d.Tables[i].Def, d.Tables[i].DataID, c.newLayout)
		if err != nil {
			return err
		}
		d.Tables[i] = c.noteLayout(d.Tables[i].Def, d.Tables[i].DataID, t)
		c.changed[keyspace] = true
		return nil
	})
}

// newFamilyLayout is the layout the engine gives new and truncated
// families.
func (e *Engine) newFamilyLayout() familyLayout {
	packed := !e.unpackedSupers
	return familyLayout{packed: packed, marked: packed, compressed: packed, rowPacked: packed && !e.unpackedRows}
}
