package migrate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// TargetCell is one cell of a converted table as a Target reads it back.
type TargetCell struct {
	// Key holds the primary-key values that identify the cell: the whole
	// primary key for a regular column, the partition key for a static one.
	Key    [][]byte
	Column int
	Value  []byte
	// Writetime is in microseconds; 0 for counters.
	Writetime int64
	// TTL is the remaining TTL in seconds as of the partition's AsOf; 0:
	// none.
	TTL int32
}

// TargetPartition is one partition of a converted table.
type TargetPartition struct {
	Cells []TargetCell
	// AsOf is the moment the TTLs are counted from.
	AsOf time.Time
}

// Target reads a converted keyspace back, for Verify.
type Target interface {
	// Partition returns the cells of the partition whose partition-key
	// values are key.
	Partition(ctx context.Context, t *supercol.Table, key [][]byte) (TargetPartition, error)
	// Partitions visits the partition keys of every partition of t.
	Partitions(ctx context.Context, t *supercol.Table, visit func(key [][]byte) error) error
}

// VerifyOptions configure Verify (with Options' TargetKeyspace, Shapes,
// Families, TTL, Now and sampling fields).
type VerifyOptions struct {
	Options
	// Tolerance is how far a TTL may be off (default 2 s).
	Tolerance time.Duration
	// Examples is how many differences are kept per family (default 10).
	Examples int
}

// Difference is one cell that differs between source and target.
type Difference struct {
	// Kind is missing (in the source, not the target), extra (in the
	// target only) or different.
	Kind   string `json:"kind"`
	Key    string `json:"key"`
	Column string `json:"column"`
	// Field is value, writetime or ttl for a different cell.
	Field  string `json:"field,omitempty"`
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
}

// FamilyVerify is one family's comparison.
type FamilyVerify struct {
	Family      string         `json:"family"`
	Table       string         `json:"table"`
	Shape       supercol.Shape `json:"shape"`
	SourceCells int64          `json:"source_cells"`
	Matched     int64          `json:"matched"`
	Missing     int64          `json:"missing"`
	Extra       int64          `json:"extra"`
	Different   int64          `json:"different"`
	Examples    []Difference   `json:"examples,omitempty"`
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Keyspace       string          `json:"keyspace"`
	TargetKeyspace string          `json:"target_keyspace"`
	Families       []*FamilyVerify `json:"families"`
	Matched        int64           `json:"matched"`
	Missing        int64           `json:"missing"`
	Extra          int64           `json:"extra"`
	Different      int64           `json:"different"`
}

// OK reports whether source and target agree.
func (r *VerifyReport) OK() bool { return r.Missing == 0 && r.Extra == 0 && r.Different == 0 }

// Verify compares src with target cell by cell: every live source cell
// must be in the target with the same value and writetime and a TTL that
// the policy explains (within the tolerance), and the target must hold
// nothing else. Cells that expire within the tolerance of now are left
// out on both sides. One partition's cells are held at a time.
func Verify(ctx context.Context, src Source, target Target, opts VerifyOptions) (*VerifyReport, error) {
	o := opts.Options.withDefaults()
	if opts.Tolerance <= 0 {
		opts.Tolerance = 2 * time.Second
	}
	if opts.Examples <= 0 {
		opts.Examples = 10
	}
	ks, plans, err := planFamilies(ctx, src, &o, nil)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Keyspace: ks.Name, TargetKeyspace: o.TargetKeyspace}
	if rep.TargetKeyspace == "" {
		rep.TargetKeyspace = ks.Name
	}
	for _, p := range plans {
		v := &verifier{opts: &opts, now: o.Now, policy: o.TTL, m: p.mapping, target: target,
			fv: &FamilyVerify{Family: p.family.Def.Name, Table: p.mapping.Table.QualifiedName(), Shape: p.mapping.Table.Shape}}
		rep.Families = append(rep.Families, v.fv)
		if err := v.run(ctx, src); err != nil {
			return rep, fmt.Errorf("verify family %s.%s: %w", ks.Name, p.family.Def.Name, err)
		}
		rep.Matched += v.fv.Matched
		rep.Missing += v.fv.Missing
		rep.Extra += v.fv.Extra
		rep.Different += v.fv.Different
	}
	return rep, nil
}

// expectedCell is a source cell as the target should hold it.
type expectedCell struct {
	value     []byte
	writetime int64
	counter   bool
	expiresAt int64 // 0: never
	ttl       int32 // the original TTL
	key       [][]byte
	column    int
}

type verifier struct {
	opts   *VerifyOptions
	now    func() time.Time
	policy TTLPolicy
	m      *supercol.Mapping
	target Target
	fv     *FamilyVerify

	seen     map[string]bool
	expected map[string]*expectedCell
	order    []string
	pk       [][]byte
	place    supercol.Placement
}

func (v *verifier) run(ctx context.Context, src Source) error {
	v.seen = map[string]bool{}
	v.expected = map[string]*expectedCell{}
	npk := partitionKeyLen(v.m.Table)
	f := v.m.Family
	err := src.Scan(ctx, f.Def.Name, Position{}, func(ch RowChunk) error {
		now := v.now()
		for i := range ch.Cells {
			c := &ch.Cells[i]
			exp := ExpiresAt(c)
			if !c.Counter && exp != 0 && exp-now.Unix() <= int64(v.opts.Tolerance/time.Second) {
				continue // expired or about to: the target may or may not have it
			}
			if err := v.m.Map(ch.Key, c.Super, c.Name, &v.place); err != nil {
				return err // names the family, row and column
			}
			if len(v.place.Key) < npk {
				return cellError(f, ch.Key, c, fmt.Errorf("mapped to %d key values, fewer than the %d partition-key columns", len(v.place.Key), npk))
			}
			if v.pk == nil {
				v.pk = copyKey(v.place.Key[:npk])
			}
			e := &expectedCell{value: c.Value, writetime: c.Timestamp, counter: c.Counter, expiresAt: exp, ttl: c.TTL,
				key: copyKey(v.place.Key), column: v.place.Column}
			if c.Counter {
				e.value = binary.BigEndian.AppendUint64(nil, uint64(c.CounterValue))
			} else {
				e.value = append([]byte(nil), c.Value...)
			}
			id := cellID(e.key, e.column)
			if _, dup := v.expected[id]; !dup {
				v.order = append(v.order, id)
			}
			v.expected[id] = e
			v.fv.SourceCells++
		}
		if !ch.Last {
			return nil
		}
		return v.comparePartition(ctx)
	})
	if err != nil {
		return err
	}
	return v.target.Partitions(ctx, v.m.Table, func(key [][]byte) error {
		if v.seen[cellID(key, -1)] {
			return nil
		}
		part, err := v.target.Partition(ctx, v.m.Table, key)
		if err != nil {
			return err
		}
		now := v.now()
		for _, tc := range part.Cells {
			if v.targetExpired(&tc, part.AsOf, now) {
				continue
			}
			v.fv.Extra++
			v.example(Difference{Kind: "extra", Key: v.formatKey(tc.Key), Column: v.columnName(tc.Column), Target: v.formatValue(tc.Column, tc.Value)})
		}
		return nil
	})
}

// comparePartition compares the expected cells of one source row with its
// partition in the target.
func (v *verifier) comparePartition(ctx context.Context) error {
	defer func() {
		clear(v.expected)
		v.order = v.order[:0]
		v.pk = nil
	}()
	if v.pk == nil {
		return nil // no live cells: nothing in the target either
	}
	v.seen[cellID(v.pk, -1)] = true
	part, err := v.target.Partition(ctx, v.m.Table, v.pk)
	if err != nil {
		return err
	}
	now := v.now()
	found := map[string]bool{}
	for i := range part.Cells {
		tc := &part.Cells[i]
		id := cellID(tc.Key, tc.Column)
		if found[id] {
			continue // a static column shows up in every row
		}
		found[id] = true
		e := v.expected[id]
		if e == nil {
			if v.targetExpired(tc, part.AsOf, now) {
				continue
			}
			v.fv.Extra++
			v.example(Difference{Kind: "extra", Key: v.formatKey(tc.Key), Column: v.columnName(tc.Column), Target: v.formatValue(tc.Column, tc.Value)})
			continue
		}
		v.compareCell(e, tc, part.AsOf)
	}
	for _, id := range v.order {
		if found[id] {
			continue
		}
		e := v.expected[id]
		v.fv.Missing++
		v.example(Difference{Kind: "missing", Key: v.formatKey(e.key), Column: v.columnName(e.column), Source: v.formatValue(e.column, e.value)})
	}
	return nil
}

// targetExpired reports a target cell that has expired by now, or will
// within the tolerance.
func (v *verifier) targetExpired(tc *TargetCell, asOf, now time.Time) bool {
	return tc.TTL > 0 && asOf.Unix()+int64(tc.TTL)-now.Unix() <= int64(v.opts.Tolerance/time.Second)
}

func (v *verifier) compareCell(e *expectedCell, tc *TargetCell, asOf time.Time) {
	col := v.m.Table.Columns[e.column]
	diff := func(field, s, t string) {
		v.fv.Different++
		v.example(Difference{Kind: "different", Key: v.formatKey(e.key), Column: col.Name, Field: field, Source: s, Target: t})
	}
	if !bytes.Equal(e.value, tc.Value) && (e.counter || col.Type.Compare(e.value, tc.Value) != 0) {
		diff("value", v.formatValue(e.column, e.value), v.formatValue(e.column, tc.Value))
		return
	}
	if e.counter {
		v.fv.Matched++
		return
	}
	if e.writetime != tc.Writetime {
		diff("writetime", strconv.FormatInt(e.writetime, 10), strconv.FormatInt(tc.Writetime, 10))
		return
	}
	if msg, ok := v.ttlMatches(e, tc.TTL, asOf); !ok {
		diff("ttl", msg, strconv.Itoa(int(tc.TTL)))
		return
	}
	v.fv.Matched++
}

// ttlMatches checks a target TTL against what the policy wrote; msg
// describes the expectation.
func (v *verifier) ttlMatches(e *expectedCell, got int32, asOf time.Time) (msg string, ok bool) {
	tol := int64(v.opts.Tolerance / time.Second)
	switch v.policy.Mode {
	case TTLNone:
		return "none", got == 0
	case TTLFixed:
		return fmt.Sprintf("at most %d", v.policy.Seconds), got > 0 && got <= v.policy.Seconds
	case TTLOriginal:
		if e.expiresAt == 0 {
			return "none", got == 0
		}
		return fmt.Sprintf("at most %d", e.ttl), got > 0 && (e.ttl == 0 || int64(got) <= int64(e.ttl)+tol)
	}
	if e.expiresAt == 0 {
		return "none", got == 0
	}
	want := e.expiresAt - asOf.Unix()
	d := want - int64(got)
	return strconv.FormatInt(want, 10), got > 0 && d <= tol && d >= -tol
}

func (v *verifier) example(d Difference) {
	if len(v.fv.Examples) < v.opts.Examples {
		v.fv.Examples = append(v.fv.Examples, d)
	}
}

func (v *verifier) columnName(i int) string {
	if i < 0 || i >= len(v.m.Table.Columns) {
		return "#" + strconv.Itoa(i)
	}
	return v.m.Table.Columns[i].Name
}

func (v *verifier) formatKey(key [][]byte) string {
	parts := make([]string, len(key))
	for i, k := range key {
		name := v.columnName(i)
		if i < len(v.m.Table.Columns) {
			parts[i] = name + "=" + formatValue(v.m.Table.Columns[i].Type, k)
		} else {
			parts[i] = name + "=" + formatValue(nil, k)
		}
	}
	return strings.Join(parts, ", ")
}

func (v *verifier) formatValue(column int, b []byte) string {
	if column < 0 || column >= len(v.m.Table.Columns) {
		return formatValue(nil, b)
	}
	return formatValue(v.m.Table.Columns[column].Type, b)
}

// partitionKeyLen counts t's partition-key columns.
func partitionKeyLen(t *supercol.Table) int {
	n := 0
	for _, c := range t.Columns {
		if c.Kind == supercol.PartitionKey {
			n++
		}
	}
	return n
}

// cellID identifies a cell by its key values and column.
func cellID(key [][]byte, column int) string {
	var b []byte
	for _, k := range key {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	b = binary.AppendVarint(b, int64(column))
	return string(b)
}

func copyKey(key [][]byte) [][]byte {
	out := make([][]byte, len(key))
	for i, k := range key {
		out[i] = append([]byte{}, k...)
	}
	return out
}
