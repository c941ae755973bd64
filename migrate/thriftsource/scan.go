package thriftsource

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Scan streams the rows of family in the cluster's row order, resuming
// after from.AfterKey.
//
// Rows are read by get_range_slices, RowPageSize rows at a time (at most
// firstRowPageSize in the first page of a scan). With a
// hashed partitioner the next page starts (exclusively) at the token of
// the last row read, computed locally with the cluster's partitioner; with
// an ordered one it starts at the last key, which is read again and
// dropped. (Rows whose key hashes to the very token of the last row of a
// page, after it, would be skipped: a collision of 64-bit Murmur3 or
// 127-bit MD5 tokens.)
//
// Each row's first ColumnPageSize columns come with its range page; a
// longer row is read on by get_slice from its last column name, that name
// being returned again and dropped, so a wide row is never held whole.
// In a Super family the pages count super columns, and the Thrift API
// returns each super column whole: a page holds at most ColumnPageSize
// super columns with all their subcolumns.
//
// Expired and deleted cells are filtered out by the server. Thrift does
// not expose a cell's local expiration time, so ExpiresAt is estimated as
// Timestamp/1e6 + TTL: exact for clients that write microsecond
// timestamps of the current time, off by the difference otherwise.
// A row without live cells (a range ghost) comes as an empty Last chunk.
func (s *Source) Scan(ctx context.Context, family string, from migrate.Position, visit func(migrate.RowChunk) error) error {
	ks, err := s.describe(ctx)
	if err != nil {
		return err
	}
	var cf *cassandra.CfDef
	for _, d := range ks.CfDefs {
		if d.Name == family {
			cf = d
		}
	}
	if cf == nil {
		return fmt.Errorf("thrift source %s: keyspace %s has no column family %q", s.addr, s.keyspace, family)
	}
	sc := &scanner{s: s, family: family, super: cf.ColumnType == "Super", visit: visit}
	if err := sc.rows(ctx, from.AfterKey); err != nil {
		var ve visitError
		if errors.As(err, &ve) {
			return ve.err
		}
		return fmt.Errorf("thrift source %s: scan %s.%s: %w", s.addr, s.keyspace, family, err)
	}
	return nil
}

// scanner is one Scan in progress.
type scanner struct {
	s      *Source
	family string
	super  bool
	visit  func(migrate.RowChunk) error
}

// visitError marks an error returned by visit, passed through unwrapped.
type visitError struct{ err error }

func (e visitError) Error() string { return e.err.Error() }
func (e visitError) Unwrap() error { return e.err }

// firstRowPageSize is the most rows the first get_range_slices of a scan
// asks for.
const firstRowPageSize = 100

// rows pages through the family's rows after after (nil: from the start).
func (sc *scanner) rows(ctx context.Context, after []byte) error {
	ordered := sc.s.part.Ordered()
	// The first page is small: many scans stop after a few rows (the
	// sample that chooses a family's shape), and a full page of wide rows
	// is a lot to read for nothing. The next pages are full.
	pageSize := min(sc.s.opts.RowPageSize, firstRowPageSize)
	for {
		kr := sc.keyRange(after, pageSize)
		pageSize = sc.s.opts.RowPageSize
		var page []*cassandra.KeySlice
		err := sc.s.conn.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
			var err error
			page, err = client.GetRangeSlices(ctx, sc.parent(nil), sc.firstPage(), kr, sc.s.opts.Consistency)
			return err
		})
		if err != nil {
			return fmt.Errorf("get_range_slices after key %x: %w", after, describeError(err))
		}
		fresh := page
		if ordered && after != nil && len(fresh) > 0 && bytes.Equal(fresh[0].Key, after) {
			fresh = fresh[1:]
		}
		for _, row := range fresh {
			if err := sc.row(ctx, row); err != nil {
				if errors.As(err, new(visitError)) {
					return err
				}
				return fmt.Errorf("row %x: %w", row.Key, err)
			}
			after = row.Key
		}
		if len(page) < int(kr.Count) || len(fresh) == 0 {
			return nil
		}
	}
}

// keyRange is the range of the next page of rows after after.
func (sc *scanner) keyRange(after []byte, pageSize int) *cassandra.KeyRange {
	p := sc.s.part
	kr := &cassandra.KeyRange{Count: int32(pageSize)}
	if p.Ordered() {
		kr.StartKey, kr.EndKey = []byte{}, []byte{}
		if after != nil {
			// The first row of the page is after itself, read again.
			kr.StartKey = after
			kr.Count++
		}
		return kr
	}
	start := p.MinToken()
	if after != nil {
		start = p.Token(after)
	}
	startText, endText := p.FormatToken(start), p.FormatToken(p.MinToken())
	kr.StartToken, kr.EndToken = &startText, &endText
	return kr
}

func (sc *scanner) parent(super []byte) *cassandra.ColumnParent {
	return &cassandra.ColumnParent{ColumnFamily: sc.family, SuperColumn: super}
}

// firstPage selects a row's first page of columns.
func (sc *scanner) firstPage() *cassandra.SlicePredicate {
	return &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{
		Start: []byte{}, Finish: []byte{}, Count: int32(sc.s.opts.ColumnPageSize),
	}}
}

// row streams one row whose first page came with the range page.
func (sc *scanner) row(ctx context.Context, ks *cassandra.KeySlice) error {
	pageSize := sc.s.opts.ColumnPageSize
	pending := ks.Columns
	more := len(pending) >= pageSize
	for {
		var next []*cassandra.ColumnOrSuperColumn
		if more {
			var err error
			next, err = sc.slice(ctx, ks.Key, lastName(pending), pageSize)
			if err != nil {
				return err
			}
			more = len(next) >= pageSize
		}
		cells, err := toCells(pending)
		if err != nil {
			return err
		}
		last := len(next) == 0
		if err := sc.visit(migrate.RowChunk{Key: ks.Key, Cells: cells, Last: last}); err != nil {
			return visitError{err}
		}
		if last {
			return nil
		}
		pending = next
	}
}

// slice reads up to count columns (super columns) of a row after the
// name after.
func (sc *scanner) slice(ctx context.Context, key, after []byte, count int) ([]*cassandra.ColumnOrSuperColumn, error) {
	pred := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{
		Start: after, Finish: []byte{}, Count: int32(count + 1),
	}}
	var cols []*cassandra.ColumnOrSuperColumn
	err := sc.s.conn.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
		var err error
		cols, err = client.GetSlice(ctx, key, sc.parent(nil), pred, sc.s.opts.Consistency)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("get_slice after column %x: %w", after, describeError(err))
	}
	if len(cols) > 0 && bytes.Equal(nameOf(cols[0]), after) {
		cols = cols[1:]
	}
	return cols, nil
}

func lastName(cols []*cassandra.ColumnOrSuperColumn) []byte {
	return nameOf(cols[len(cols)-1])
}

func nameOf(c *cassandra.ColumnOrSuperColumn) []byte {
	switch {
	case c.Column != nil:
		return c.Column.Name
	case c.SuperColumn != nil:
		return c.SuperColumn.Name
	case c.CounterColumn != nil:
		return c.CounterColumn.Name
	case c.CounterSuperColumn != nil:
		return c.CounterSuperColumn.Name
	}
	return nil
}

// toCells converts a page of columns or super columns.
func toCells(cols []*cassandra.ColumnOrSuperColumn) ([]migrate.Cell, error) {
	cells := make([]migrate.Cell, 0, len(cols))
	for _, c := range cols {
		switch {
		case c.Column != nil:
			cells = append(cells, columnCell(nil, c.Column))
		case c.CounterColumn != nil:
			cells = append(cells, counterCell(nil, c.CounterColumn))
		case c.SuperColumn != nil:
			for _, sub := range c.SuperColumn.Columns {
				cells = append(cells, columnCell(c.SuperColumn.Name, sub))
			}
		case c.CounterSuperColumn != nil:
			for _, sub := range c.CounterSuperColumn.Columns {
				cells = append(cells, counterCell(c.CounterSuperColumn.Name, sub))
			}
		default:
			return nil, fmt.Errorf("empty ColumnOrSuperColumn in a slice")
		}
	}
	return cells, nil
}

func columnCell(super []byte, c *cassandra.Column) migrate.Cell {
	cell := migrate.Cell{Super: super, Name: c.Name, Value: c.Value, Timestamp: c.GetTimestamp(), TTL: c.GetTTL()}
	if cell.TTL > 0 {
		cell.ExpiresAt = cell.Timestamp/1_000_000 + int64(cell.TTL)
	}
	return cell
}

func counterCell(super []byte, c *cassandra.CounterColumn) migrate.Cell {
	return migrate.Cell{
		Super:        super,
		Name:         c.Name,
		Value:        binary.BigEndian.AppendUint64(nil, uint64(c.Value)),
		Counter:      true,
		CounterValue: c.Value,
	}
}
