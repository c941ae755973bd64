package jsonsource

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// noDeletion is Long.MIN_VALUE, sstable2json's "not deleted" timestamp.
const noDeletion = math.MinInt64

// decoder walks one dump token by token, so that only one cell is ever
// decoded at a time whatever the size of a row.
type decoder struct {
	dec       *json.Decoder
	family    *supercol.Family
	now       int64
	chunkSize int
	// flat is CompositeType(comparator, subcomparator): the names of a
	// Super family dumped flat, as Cassandra 2.0 stores super columns.
	flat marshal.Type
}

func newDecoder(r io.Reader, f *supercol.Family, now int64, chunkSize int) *decoder {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	dec.UseNumber()
	d := &decoder{dec: dec, family: f, now: now, chunkSize: max(chunkSize, 1)}
	if f.Def.Super {
		// Cannot fail: both types parsed already.
		d.flat, _ = marshal.Parse("CompositeType(" + f.Comparator.Name() + "," + f.SubComparator.Name() + ")")
	}
	return d
}

// visitError marks an error returned by visit.
type visitError struct{ err error }

func (e visitError) Error() string { return e.err.Error() }
func (e visitError) Unwrap() error { return e.err }

// rows reads the top-level array of rows.
func (d *decoder) rows(ctx context.Context, after []byte, visit func(migrate.RowChunk) error) error {
	if err := d.expectDelim('['); err != nil {
		return fmt.Errorf("start of dump: %w", err)
	}
	skipping := after != nil
	for n := 0; d.dec.More(); n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &rowReader{d: d, visit: visit, skip: skipping}
		if err := r.read(); err != nil {
			if _, ok := err.(visitError); ok {
				return err
			}
			if r.key == nil {
				return fmt.Errorf("row %d: %w", n, err)
			}
			return fmt.Errorf("row key %x: %w", r.key, err)
		}
		if skipping && bytes.Equal(r.key, after) {
			skipping = false
		}
	}
	if err := d.expectDelim(']'); err != nil {
		return fmt.Errorf("end of dump: %w", err)
	}
	if skipping {
		return fmt.Errorf("resume key %x not found", after)
	}
	return nil
}

func (d *decoder) expectDelim(want json.Delim) error {
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != want {
		return fmt.Errorf("found %v where %q was expected", tok, want)
	}
	return nil
}

// skipValue skips one JSON value.
func (d *decoder) skipValue() error {
	depth := 0
	for {
		tok, err := d.dec.Token()
		if err != nil {
			return err
		}
		if delim, ok := tok.(json.Delim); ok {
			if delim == '[' || delim == '{' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func (d *decoder) stringToken(what string) (string, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("%s: found %v, want a string", what, tok)
	}
	return s, nil
}

// deletionInfo is the JSON of a row or super column's metadata.
type deletionInfo struct {
	DeletionInfo *struct {
		MarkedForDeleteAt *json.Number `json:"markedForDeleteAt"`
		LocalDeletionTime *json.Number `json:"localDeletionTime"`
	} `json:"deletionInfo"`
}

// readMetadata reads a metadata object and returns its deletion
// timestamp (noDeletion when absent).
func (d *decoder) readMetadata() (int64, error) {
	var meta deletionInfo
	if err := d.dec.Decode(&meta); err != nil {
		return 0, fmt.Errorf("metadata: %w", err)
	}
	if meta.DeletionInfo == nil || meta.DeletionInfo.MarkedForDeleteAt == nil {
		return noDeletion, nil
	}
	ts, err := meta.DeletionInfo.MarkedForDeleteAt.Int64()
	if err != nil {
		return 0, fmt.Errorf("metadata: markedForDeleteAt: %w", err)
	}
	return ts, nil
}

func (d *decoder) readInt64(what string) (int64, error) {
	var n json.Number
	if err := d.dec.Decode(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	v, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// rangeTombstone is a "t" entry: names from min to max deleted at ts.
type rangeTombstone struct {
	min, max []byte
	ts       int64
}

// rowReader reads one row and visits its chunks.
type rowReader struct {
	d     *decoder
	visit func(migrate.RowChunk) error
	// skip reads the row without visiting it (resuming).
	skip      bool
	key       []byte
	deletedAt int64
	ranges    []rangeTombstone
	pending   []migrate.Cell
	visited   bool
}

func (r *rowReader) read() error {
	d := r.d
	r.deletedAt = noDeletion
	if err := d.expectDelim('{'); err != nil {
		return err
	}
	sawColumns := false
	for d.dec.More() {
		field, err := d.stringToken("row field")
		if err != nil {
			return err
		}
		switch field {
		case "key":
			if r.key != nil {
				return fmt.Errorf("two keys")
			}
			text, err := d.stringToken("key")
			if err != nil {
				return err
			}
			if r.key, err = hex.DecodeString(text); err != nil {
				return fmt.Errorf("key %q is not hex: %w", text, err)
			}
			if len(r.key) == 0 {
				return fmt.Errorf("empty key")
			}
		case "metadata":
			if sawColumns {
				return fmt.Errorf("metadata after columns")
			}
			if r.deletedAt, err = d.readMetadata(); err != nil {
				return err
			}
		case "deletedAt":
			if sawColumns {
				return fmt.Errorf("deletedAt after columns")
			}
			if r.deletedAt, err = d.readInt64("deletedAt"); err != nil {
				return err
			}
		case "columns":
			if r.key == nil {
				return fmt.Errorf("columns before the key")
			}
			if sawColumns {
				return fmt.Errorf("two column lists")
			}
			sawColumns = true
			if err := r.columns(); err != nil {
				return err
			}
		default:
			if err := d.skipValue(); err != nil {
				return err
			}
		}
	}
	if err := d.expectDelim('}'); err != nil {
		return err
	}
	if r.key == nil {
		return fmt.Errorf("row without a key")
	}
	return r.flush(true)
}

// columns reads a row's columns: a list of cells, or in a Super family
// dumped by Cassandra 1.2 an object of super columns.
func (r *rowReader) columns() error {
	d := r.d
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	delim, _ := tok.(json.Delim)
	switch {
	case delim == '[':
		for d.dec.More() {
			if err := r.cell(nil, noDeletion); err != nil {
				return err
			}
		}
		return d.expectDelim(']')
	case delim == '{' && d.family.Def.Super:
		for d.dec.More() {
			if err := r.superColumn(); err != nil {
				return err
			}
		}
		return d.expectDelim('}')
	}
	return fmt.Errorf("columns: found %v, want a list of cells", tok)
}

// superColumn reads "name": {"metadata"|"deletedAt": ..., "subColumns": [...]}.
func (r *rowReader) superColumn() error {
	d := r.d
	text, err := d.stringToken("super column name")
	if err != nil {
		return err
	}
	name, err := parseName(d.family.Comparator, text)
	if err != nil {
		return fmt.Errorf("super column %q: %w", text, err)
	}
	if err := d.expectDelim('{'); err != nil {
		return fmt.Errorf("super column %q: %w", text, err)
	}
	deletedAt := int64(noDeletion)
	for d.dec.More() {
		field, err := d.stringToken("super column field")
		if err != nil {
			return err
		}
		switch field {
		case "metadata":
			deletedAt, err = d.readMetadata()
		case "deletedAt":
			deletedAt, err = d.readInt64("deletedAt")
		case "subColumns":
			err = r.subColumns(name, deletedAt)
		default:
			err = d.skipValue()
		}
		if err != nil {
			return fmt.Errorf("super column %q: %w", text, err)
		}
	}
	return d.expectDelim('}')
}

func (r *rowReader) subColumns(super []byte, deletedAt int64) error {
	d := r.d
	if err := d.expectDelim('['); err != nil {
		return err
	}
	for d.dec.More() {
		if err := r.cell(super, deletedAt); err != nil {
			return err
		}
	}
	return d.expectDelim(']')
}

// cell reads one cell: [name, value, timestamp] optionally followed by
// "d" (tombstone), "e", ttl, localExpirationTime (expiring), "c",
// timestampOfLastDelete (counter), or a range tombstone
// [min, max, markedForDeleteAt, "t", localDeletionTime]. super is the
// enclosing super column (1.2 layout) and superDeletedAt its deletion.
func (r *rowReader) cell(super []byte, superDeletedAt int64) error {
	d := r.d
	var raw []any
	if err := d.dec.Decode(&raw); err != nil {
		return fmt.Errorf("cell: %w", err)
	}
	if len(raw) < 3 {
		return fmt.Errorf("cell %v: want at least name, value and timestamp", raw)
	}
	nameText, ok1 := raw[0].(string)
	valueText, ok2 := raw[1].(string)
	tsNumber, ok3 := raw[2].(json.Number)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("cell %v: want [string, string, number, ...]", raw)
	}
	ts, err := tsNumber.Int64()
	if err != nil {
		return fmt.Errorf("cell %q: timestamp: %w", nameText, err)
	}
	flag := ""
	if len(raw) > 3 {
		if flag, ok1 = raw[3].(string); !ok1 {
			return fmt.Errorf("cell %q: flag %v is not a string", nameText, raw[3])
		}
	}
	// The type of names at this level: flat names of a Super family
	// carry the super column name as their first component.
	nameType := d.family.Comparator
	flat := d.family.Def.Super && super == nil
	switch {
	case flat:
		nameType = d.flat
	case d.family.Def.Super:
		nameType = d.family.SubComparator
	}
	if flag == "t" {
		if len(raw) != 5 {
			return fmt.Errorf("range tombstone %q: want 5 fields", nameText)
		}
		lo, err := parseBound(nameType, nameText)
		if err != nil {
			return fmt.Errorf("range tombstone start %q: %w", nameText, err)
		}
		hi, err := parseBound(nameType, valueText)
		if err != nil {
			return fmt.Errorf("range tombstone end %q: %w", valueText, err)
		}
		r.ranges = append(r.ranges, rangeTombstone{min: lo, max: hi, ts: ts})
		return nil
	}
	name, err := parseName(nameType, nameText)
	if err != nil {
		return fmt.Errorf("cell %q: %w", nameText, err)
	}
	cell := migrate.Cell{Super: super, Name: name, Timestamp: ts}
	if flat {
		parts, err := splitComposite(name)
		if err != nil || len(parts) != 2 || len(parts[0]) == 0 || len(parts[1]) == 0 {
			return fmt.Errorf("cell %q: a Super family's flat name needs a super column and a column name", nameText)
		}
		cell.Super, cell.Name = parts[0], parts[1]
	}
	switch flag {
	case "":
		if len(raw) != 3 {
			return fmt.Errorf("cell %q: %d fields without a flag", nameText, len(raw))
		}
	case "d":
		return nil // a tombstone: nothing to convert
	case "e":
		if len(raw) != 6 {
			return fmt.Errorf("expiring cell %q: want 6 fields", nameText)
		}
		ttl, err1 := intField(raw[4])
		exp, err2 := intField(raw[5])
		if err := errors.Join(err1, err2); err != nil || ttl <= 0 || ttl > math.MaxInt32 {
			return fmt.Errorf("expiring cell %q: ttl %v, local expiration time %v", nameText, raw[4], raw[5])
		}
		if exp <= d.now {
			return nil // expired
		}
		cell.TTL, cell.ExpiresAt = int32(ttl), exp
	case "c":
		if len(raw) != 5 {
			return fmt.Errorf("counter cell %q: want 5 fields", nameText)
		}
		total, err := counterTotal(valueText)
		if err != nil {
			return fmt.Errorf("counter cell %q: %w", nameText, err)
		}
		cell.Counter, cell.CounterValue = true, total
		cell.Value = binary.BigEndian.AppendUint64(nil, uint64(total))
	default:
		return fmt.Errorf("cell %q: unknown flag %q", nameText, flag)
	}
	if !cell.Counter {
		validator := d.valueValidator(cell.Name)
		v, err := validator.FromString(valueText)
		if err == nil {
			err = validator.Validate(v)
		}
		if err != nil {
			return fmt.Errorf("cell %q: value %q is not a %s: %w", nameText, valueText, validator.Name(), err)
		}
		cell.Value = v
		if ts <= r.deletedAt || ts <= superDeletedAt || r.shadowed(nameType, name, ts) {
			return nil
		}
	}
	return r.add(cell)
}

// shadowed reports whether a range tombstone read earlier in the row
// covers the name.
func (r *rowReader) shadowed(t marshal.Type, name []byte, ts int64) bool {
	for _, rt := range r.ranges {
		if ts <= rt.ts && t.Compare(rt.min, name) <= 0 && t.Compare(name, rt.max) <= 0 {
			return true
		}
	}
	return false
}

func (r *rowReader) add(c migrate.Cell) error {
	if len(r.pending) == r.d.chunkSize {
		if err := r.flush(false); err != nil {
			return err
		}
	}
	r.pending = append(r.pending, c)
	return nil
}

// flush visits the pending cells; a row's final flush carries Last.
func (r *rowReader) flush(last bool) error {
	if r.skip {
		r.pending = r.pending[:0]
		return nil
	}
	if !last && len(r.pending) == 0 {
		return nil
	}
	if err := r.visit(migrate.RowChunk{Key: r.key, Cells: r.pending, Last: last}); err != nil {
		return visitError{err}
	}
	r.pending = nil
	r.visited = true
	return nil
}

func (d *decoder) valueValidator(name []byte) marshal.Type {
	for _, c := range d.family.Columns {
		if bytes.Equal(c.Name, name) {
			return c.Validator
		}
	}
	return d.family.DefaultValidator
}

func parseName(t marshal.Type, text string) ([]byte, error) {
	b, err := t.FromString(text)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("empty name")
	}
	if err := t.Validate(b); err != nil {
		return nil, err
	}
	return t.Normalize(b), nil
}

// parseBound parses a range tombstone bound, which may be empty (open).
func parseBound(t marshal.Type, text string) ([]byte, error) {
	b, err := t.FromString(text)
	if err != nil {
		return nil, err
	}
	if err := t.Validate(b); err != nil {
		return nil, err
	}
	return b, nil
}

func intField(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	return strconv.ParseInt(string(n), 10, 64)
}

// counterTotal sums the counts of a counter context (hex): a 2-byte
// header length n, n 2-byte header elements, then shards of a 16-byte
// counter id, an 8-byte clock and an 8-byte count.
func counterTotal(text string) (int64, error) {
	b, err := hex.DecodeString(text)
	if err != nil {
		return 0, fmt.Errorf("counter context is not hex: %w", err)
	}
	if len(b) < 2 {
		return 0, fmt.Errorf("counter context of %d bytes", len(b))
	}
	n := int(int16(binary.BigEndian.Uint16(b)))
	if n < 0 || 2+2*n > len(b) {
		return 0, fmt.Errorf("counter context header of %d elements in %d bytes", n, len(b))
	}
	shards := b[2+2*n:]
	if len(shards)%32 != 0 {
		return 0, fmt.Errorf("counter context shards of %d bytes", len(shards))
	}
	var total int64
	for i := 0; i < len(shards); i += 32 {
		total += int64(binary.BigEndian.Uint64(shards[i+24:]))
	}
	return total, nil
}

// splitComposite splits a CompositeType value into its components (each
// a 2-byte length, the bytes and an end-of-component byte).
func splitComposite(b []byte) ([][]byte, error) {
	var parts [][]byte
	for len(b) > 0 {
		if len(b) < 3 {
			return nil, fmt.Errorf("truncated composite")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n+1 {
			return nil, fmt.Errorf("truncated composite component")
		}
		parts = append(parts, b[2:2+n])
		b = b[2+n+1:]
	}
	return parts, nil
}
