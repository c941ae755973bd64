package enginesource

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// Default page sizes.
const (
	DefaultRowPageSize    = 1000
	DefaultColumnPageSize = 1000
)

// Source reads a keyspace from a store.Engine. Rows come in the engine's
// partitioner order; cells carry their exact expiry times. What is live is
// decided by the engine's clock (badgerstore.Options.Now), as thriftd
// would answer at that moment.
type Source struct {
	engine   store.Engine
	keyspace string
	// RowPageSize is the number of rows read per engine scan; each scan
	// is a short read transaction (default 1000).
	RowPageSize int
	// ColumnPageSize is the number of cells (super columns at the super
	// level of a Super family) read per slice (default 1000).
	ColumnPageSize int
}

var _ migrate.Source = (*Source)(nil)

// New reads keyspace from engine, which the caller keeps owning (Close
// does not close it).
func New(engine store.Engine, keyspace string) (*Source, error) {
	if _, ok := engine.Catalog().Keyspace(keyspace); !ok {
		return nil, fmt.Errorf("engine source: keyspace %q: %w", keyspace, store.ErrNoKeyspace)
	}
	return &Source{engine: engine, keyspace: keyspace, RowPageSize: DefaultRowPageSize, ColumnPageSize: DefaultColumnPageSize}, nil
}

// Keyspace describes the keyspace from the engine's catalog: type names as
// stored, declared column names in the string form of the comparator
// (subcomparator in a Super family).
func (s *Source) Keyspace(ctx context.Context) (supercol.KeyspaceDef, error) {
	ks, ok := s.engine.Catalog().Keyspace(s.keyspace)
	if !ok {
		return supercol.KeyspaceDef{}, fmt.Errorf("engine source: keyspace %q: %w", s.keyspace, store.ErrNoKeyspace)
	}
	out := supercol.KeyspaceDef{Name: ks.Def.Name}
	for _, name := range ks.TableNames() {
		out.Families = append(out.Families, familyDef(ks.Tables[name]))
	}
	return out, nil
}

func familyDef(t *store.Table) supercol.FamilyDef {
	d := t.Def
	def := supercol.FamilyDef{
		Name:             d.Name,
		Super:            d.Super,
		KeyValidator:     d.KeyValidator,
		Comparator:       d.Comparator,
		SubComparator:    d.SubComparator,
		DefaultValidator: d.DefaultValidator,
		KeyAlias:         string(d.KeyAlias),
		ValueAlias:       string(d.ValueAlias),
		DefaultTTL:       t.DefaultTTL(),
	}
	for _, a := range d.ColumnAliases {
		def.ColumnAliases = append(def.ColumnAliases, string(a))
	}
	nameType := t.CellNameType()
	for _, c := range d.Columns {
		col := supercol.ColumnDef{Name: nameType.String(c.Name), Validator: c.Validator}
		if c.IndexType != nil {
			if c.IndexName != nil {
				col.IndexName = *c.IndexName
			}
			if col.IndexName == "" {
				col.IndexName = fmt.Sprintf("%s_%s_idx", d.Name, col.Name)
			}
		}
		def.Columns = append(def.Columns, col)
	}
	return def
}

// pendingRow is a row read by a scan page, with its first page of cells.
type pendingRow struct {
	key   []byte
	cells []migrate.Cell
	// more is set when the row may hold more than the first page.
	more bool
	// last is the name (super column name at the super level) the first
	// page ended with.
	last []byte
}

// Scan streams the rows of family in partitioner order after
// from.AfterKey. Rows are read RowPageSize at a time, each with its first
// ColumnPageSize cells (super columns); longer rows are read on by slices
// from their last name, so a wide row is never held whole (a super column,
// which the engine returns whole, is the unit in a Super family). Deleted
// rows still holding tombstones come as empty Last chunks.
func (s *Source) Scan(ctx context.Context, family string, from migrate.Position, visit func(migrate.RowChunk) error) error {
	t, ok := s.engine.Catalog().Table(s.keyspace, family)
	if !ok {
		return fmt.Errorf("engine source: %s.%s: %w", s.keyspace, family, store.ErrNoTable)
	}
	rowPage, colPage := max(s.RowPageSize, 1), max(s.ColumnPageSize, 1)
	after := from.AfterKey
	for {
		rows, exhausted, err := s.scanPage(ctx, t, after, rowPage, colPage)
		if err != nil {
			return fmt.Errorf("engine source: scan %s.%s after key %x: %w", s.keyspace, family, after, err)
		}
		for _, r := range rows {
			if err := s.emitRow(ctx, t, r, colPage, visit); err != nil {
				var ve visitError
				if errors.As(err, &ve) {
					return ve.err
				}
				return fmt.Errorf("engine source: %s.%s row %x: %w", s.keyspace, family, r.key, err)
			}
			after = r.key
		}
		if exhausted {
			return nil
		}
	}
}

// scanPage reads up to rowPage rows after the key after (nil: from the
// first row), copying what it keeps.
func (s *Source) scanPage(ctx context.Context, t *store.Table, after []byte, rowPage, colPage int) ([]pendingRow, bool, error) {
	q := &store.ScanQuery{Slice: store.SliceQuery{Count: colPage}}
	if after != nil {
		q.Start = store.RowBound{Kind: store.BoundKey, Key: after}
	}
	var rows []pendingRow
	var out store.SliceResult
	exhausted := true
	err := s.engine.Scan(ctx, t, q, &out, func(key []byte) (bool, error) {
		if after != nil && bytes.Equal(key, after) {
			return true, nil
		}
		if len(rows) == rowPage {
			exhausted = false
			return false, nil
		}
		r := pendingRow{key: bytes.Clone(key)}
		r.cells, r.last = copyCells(t, &out, nil)
		r.more = out.Len() >= colPage
		rows = append(rows, r)
		return true, nil
	})
	return rows, exhausted, err
}

// visitError marks an error returned by visit.
type visitError struct{ err error }

func (e visitError) Error() string { return e.err.Error() }
func (e visitError) Unwrap() error { return e.err }

// emitRow visits a row's chunks: its first page, then the pages that
// follow it, each visited once the next one is known (so that the final
// chunk carries Last).
func (s *Source) emitRow(ctx context.Context, t *store.Table, r pendingRow, colPage int, visit func(migrate.RowChunk) error) error {
	cells, last, more := r.cells, r.last, r.more
	var out store.SliceResult
	for {
		var next []migrate.Cell
		var nextLast []byte
		if more {
			out.Reset()
			q := &store.SliceQuery{Start: last, Count: colPage + 1}
			if err := s.engine.Slice(ctx, t, r.key, q, &out); err != nil {
				return fmt.Errorf("slice after %x: %w", last, err)
			}
			n := out.Len()
			next, nextLast = copyCells(t, &out, last)
			more = n >= colPage+1
		}
		final := len(next) == 0
		if err := visit(migrate.RowChunk{Key: r.key, Cells: cells, Last: final}); err != nil {
			return visitError{err}
		}
		if final {
			return nil
		}
		cells, last = next, nextLast
	}
}

// copyCells converts the cells of a slice result, dropping the name skip
// (the name a continuation slice starts at, read again); it returns the
// last name (super column name at the super level) of the result.
func copyCells(t *store.Table, out *store.SliceResult, skip []byte) ([]migrate.Cell, []byte) {
	var cells []migrate.Cell
	var last []byte
	if t.Def.Super {
		for _, sc := range out.Supers {
			last = sc.Name
			if skip != nil && bytes.Equal(sc.Name, skip) {
				continue
			}
			super := bytes.Clone(sc.Name)
			for _, c := range sc.Cells {
				cells = append(cells, toCell(t, super, c))
			}
		}
	} else {
		for _, c := range out.Cells {
			last = c.Name
			if skip != nil && bytes.Equal(c.Name, skip) {
				continue
			}
			cells = append(cells, toCell(t, nil, c))
		}
	}
	return cells, bytes.Clone(last)
}

func toCell(t *store.Table, super []byte, c store.Cell) migrate.Cell {
	cell := migrate.Cell{
		Super:     super,
		Name:      bytes.Clone(c.Name),
		Timestamp: c.Timestamp,
		TTL:       c.TTL,
		ExpiresAt: int64(c.ExpiresAt),
	}
	if t.Counter {
		cell.Counter, cell.CounterValue = true, c.CounterValue
		cell.Value = binary.BigEndian.AppendUint64(nil, uint64(c.CounterValue))
		cell.Timestamp, cell.TTL, cell.ExpiresAt = 0, 0, 0
		return cell
	}
	cell.Value = bytes.Clone(c.Value)
	return cell
}

// Close releases nothing: the engine belongs to the caller.
func (s *Source) Close() error { return nil }
