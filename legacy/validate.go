package legacy

import (
	"bytes"
	"strconv"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The checks below follow Cassandra's ThriftValidation: same order, same
// messages, so that clients matching on reason texts keep working.

const (
	// maxNameLength is the longest cell or super column name (and row
	// key) Cassandra accepts.
	maxNameLength = 65535
	// maxTTL is Cassandra's largest TTL: 20 years.
	maxTTL = 20 * 365 * 24 * 60 * 60
)

// nameType is the comparator names are validated against: the family's
// comparator for Standard families and super column names, the
// subcomparator for names inside a super column.
func nameType(t *store.Table, super []byte) marshal.Type {
	if t.Def.Super && super != nil {
		return t.SubComparator
	}
	return t.Comparator
}

func validateKey(t *store.Table, key []byte) error {
	if len(key) == 0 {
		return ire("Key may not be empty")
	}
	if len(key) > maxNameLength {
		return iref("Key length of %d is longer than maximum of %d", len(key), maxNameLength)
	}
	if err := t.KeyValidator.Validate(key); err != nil {
		return ire(err.Error())
	}
	return nil
}

// validateNames checks names in the context of a super column (nil: at
// row level).
func validateNames(t *store.Table, super []byte, names [][]byte) error {
	if super != nil {
		if len(super) > maxNameLength {
			return iref("supercolumn name length must not be greater than %d", maxNameLength)
		}
		if len(super) == 0 {
			return ire("supercolumn name must not be empty")
		}
		if !t.Def.Super {
			return iref("supercolumn specified to table %s containing normal columns", t.Def.Name)
		}
	}
	typ := nameType(t, super)
	for _, name := range names {
		if len(name) > maxNameLength {
			return iref("column name length must not be greater than %d", maxNameLength)
		}
		if len(name) == 0 {
			return ire("column name must not be empty")
		}
		if err := typ.Validate(name); err != nil {
			return ire(err.Error())
		}
		if err := checkStorableName(typ, name); err != nil {
			return err
		}
	}
	return nil
}

func validateName(t *store.Table, super, name []byte) error {
	return validateNames(t, super, [][]byte{name})
}

// checkStorableName refuses names that Cassandra accepts but cannot store:
// a DecimalType value without unscaled bytes (comparing it throws, and it
// poisons the node's commit log) and a composite name with the static
// column marker 0xffff (the write path crashes).
func checkStorableName(typ marshal.Type, name []byte) error {
	if why := marshal.UnstorableName(typ, name); why != "" {
		return ire(why)
	}
	return nil
}

func validateColumnPath(t *store.Table, p *cassandra.ColumnPath) error {
	if !t.Def.Super {
		if p.SuperColumn != nil {
			return iref("supercolumn parameter is invalid for standard CF %s", t.Def.Name)
		}
		if p.Column == nil {
			return iref("column parameter is not optional for standard CF %s", t.Def.Name)
		}
	} else if p.SuperColumn == nil {
		return iref("supercolumn parameter is not optional for super CF %s", t.Def.Name)
	}
	return validatePathNames(t, p)
}

// validatePathNames checks the names a path gives: the column's, then
// the super column's.
func validatePathNames(t *store.Table, p *cassandra.ColumnPath) error {
	if p.Column != nil {
		if err := validateName(t, p.SuperColumn, p.Column); err != nil {
			return err
		}
	}
	if p.SuperColumn != nil {
		return validateName(t, nil, p.SuperColumn)
	}
	return nil
}

func validateColumnParent(t *store.Table, p *cassandra.ColumnParent) error {
	if !t.Def.Super && p.SuperColumn != nil {
		return iref("table alone is required for standard CF %s", t.Def.Name)
	}
	if p.SuperColumn != nil {
		return validateName(t, nil, p.SuperColumn)
	}
	return nil
}

// validateColumnPathOrParent checks the path of a removal, where the
// column is optional even for a Standard family.
func validateColumnPathOrParent(t *store.Table, p *cassandra.ColumnPath) error {
	if t.Def.Super {
		if p.SuperColumn == nil && p.Column != nil {
			return iref("A column cannot be specified without specifying a super column for removal on super CF %s", t.Def.Name)
		}
	} else if p.SuperColumn != nil {
		return iref("supercolumn may not be specified for standard CF %s", t.Def.Name)
	}
	return validatePathNames(t, p)
}

func validateRange(t *store.Table, super []byte, r *cassandra.SliceRange) error {
	if r.Count < 0 {
		return ire("get_slice requires non-negative count")
	}
	if len(r.Start) > maxNameLength {
		return iref("range start length cannot be larger than %d", maxNameLength)
	}
	if len(r.Finish) > maxNameLength {
		return iref("range finish length cannot be larger than %d", maxNameLength)
	}
	typ := nameType(t, super)
	if err := typ.Validate(r.Start); err != nil {
		return ire(err.Error())
	}
	if err := typ.Validate(r.Finish); err != nil {
		return ire(err.Error())
	}
	if len(r.Start) > 0 && len(r.Finish) > 0 {
		c := typ.Compare(r.Start, r.Finish)
		if r.Reversed {
			c = -c
		}
		if c > 0 {
			return ire("range finish must come after start in the order of traversal")
		}
	}
	return nil
}

// validatePredicate checks a read predicate: exactly one of names and
// range.
func validatePredicate(t *store.Table, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate) error {
	if p.ColumnNames == nil && p.SliceRange == nil {
		return ire("predicate column_names and slice_range may not both be null")
	}
	if p.ColumnNames != nil && p.SliceRange != nil {
		return ire("predicate column_names and slice_range may not both be present")
	}
	if p.SliceRange != nil {
		return validateRange(t, parent.SuperColumn, p.SliceRange)
	}
	return validateNames(t, parent.SuperColumn, p.ColumnNames)
}

// validateSlicePredicate checks the predicate of a Deletion, where both
// parts may be given.
func validateSlicePredicate(t *store.Table, super []byte, p *cassandra.SlicePredicate) error {
	if p.ColumnNames == nil && p.SliceRange == nil {
		return ire("A SlicePredicate must be given a list of Columns, a SliceRange, or both")
	}
	if p.SliceRange != nil {
		if err := validateRange(t, super, p.SliceRange); err != nil {
			return err
		}
	}
	if p.ColumnNames != nil {
		return validateNames(t, super, p.ColumnNames)
	}
	return nil
}

func validateTTL(c *cassandra.Column) error {
	if !c.IsSetTTL() {
		return nil
	}
	if *c.TTL < 0 {
		return ire("ttl must be greater or equal to 0")
	}
	if *c.TTL > maxTTL {
		return iref("ttl is too large. requested (%d) maximum (%d)", *c.TTL, maxTTL)
	}
	return nil
}

// validateColumnData checks everything in a column but its name.
func validateColumnData(t *store.Table, super []byte, c *cassandra.Column) error {
	if err := validateTTL(c); err != nil {
		return err
	}
	if c.Value == nil {
		return ire("Column value is required")
	}
	if c.Timestamp == nil {
		return ire("Column timestamp is required")
	}
	if err := t.ValueValidator(c.Name).Validate(c.Value); err != nil {
		return iref("(%s) [%s][%s][%s] failed validation", err.Error(), t.Def.Keyspace, t.Def.Name, nameType(t, super).String(c.Name))
	}
	return nil
}

// validateColumnOrSuperColumn checks one insertion of a batch_mutate.
func validateColumnOrSuperColumn(t *store.Table, c *cassandra.ColumnOrSuperColumn) error {
	set := 0
	for _, isSet := range []bool{c.Column != nil, c.SuperColumn != nil, c.CounterColumn != nil, c.CounterSuperColumn != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return ire("ColumnOrSuperColumn must have one (and only one) of column, super_column, counter and counter_super_column")
	}
	switch {
	case c.Column != nil:
		if t.Counter {
			return iref("invalid operation for commutative table %s", t.Def.Name)
		}
		if err := validateTTL(c.Column); err != nil {
			return err
		}
		if err := validateColumnPath(t, &cassandra.ColumnPath{ColumnFamily: t.Def.Name, Column: c.Column.Name}); err != nil {
			return err
		}
		return validateColumnData(t, nil, c.Column)
	case c.SuperColumn != nil:
		if t.Counter {
			return iref("invalid operation for commutative table %s", t.Def.Name)
		}
		for _, col := range c.SuperColumn.Columns {
			if err := validateColumnPath(t, &cassandra.ColumnPath{ColumnFamily: t.Def.Name, SuperColumn: nonNil(c.SuperColumn.Name), Column: col.Name}); err != nil {
				return err
			}
			if err := validateColumnData(t, c.SuperColumn.Name, col); err != nil {
				return err
			}
		}
	case c.CounterColumn != nil:
		if !t.Counter {
			return iref("invalid operation for non commutative table %s", t.Def.Name)
		}
		return validateColumnPath(t, &cassandra.ColumnPath{ColumnFamily: t.Def.Name, Column: nonNil(c.CounterColumn.Name)})
	default:
		if !t.Counter {
			return iref("invalid operation for non commutative table %s", t.Def.Name)
		}
		for _, col := range c.CounterSuperColumn.Columns {
			if err := validateColumnPath(t, &cassandra.ColumnPath{ColumnFamily: t.Def.Name, SuperColumn: nonNil(c.CounterSuperColumn.Name), Column: nonNil(col.Name)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateDeletion checks a Deletion of a batch_mutate.
func validateDeletion(t *store.Table, d *cassandra.Deletion) error {
	if d.SuperColumn != nil {
		if err := validateName(t, nil, d.SuperColumn); err != nil {
			return err
		}
	}
	if d.Predicate != nil {
		if err := validateSlicePredicate(t, d.SuperColumn, d.Predicate); err != nil {
			return err
		}
	}
	if !t.Def.Super && d.SuperColumn != nil {
		return iref("Deletion of super columns is not possible on a standard table (KeySpace=%s Table=%s Deletion=%s)", t.Def.Keyspace, t.Def.Name, deletionString(d))
	}
	if !t.Counter && d.Timestamp == nil {
		return iref("Deletion timestamp is not optional for non commutative table %s", t.Def.Name)
	}
	return nil
}

func validateMutation(t *store.Table, m *cassandra.Mutation) error {
	if (m.ColumnOrSupercolumn == nil) == (m.Deletion == nil) {
		return ire("mutation must have one and only one of column_or_supercolumn or deletion")
	}
	if m.ColumnOrSupercolumn != nil {
		return validateColumnOrSuperColumn(t, m.ColumnOrSupercolumn)
	}
	return validateDeletion(t, m.Deletion)
}

// nonNil makes a required binary field that a client left unset an empty
// (set) one, as Java's generated code would hold it.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// deletionString renders a Deletion as the Java Thrift bindings print it
// (Cassandra quotes it in an error message).
func deletionString(d *cassandra.Deletion) string {
	var b bytes.Buffer
	b.WriteString("Deletion(")
	first := true
	sep := func() {
		if !first {
			b.WriteString(", ")
		}
		first = false
	}
	if d.Timestamp != nil {
		sep()
		b.WriteString("timestamp:")
		b.WriteString(strconv.FormatInt(*d.Timestamp, 10))
	}
	if d.SuperColumn != nil {
		sep()
		b.WriteString("super_column:")
		javaBinaryString(&b, d.SuperColumn)
	}
	b.WriteString(")")
	return b.String()
}

// javaBinaryString writes bytes as Java Thrift's TBaseHelper does: at most
// 128 bytes as space-separated uppercase hex, then "..." if cut.
func javaBinaryString(b *bytes.Buffer, v []byte) {
	const hexDigits = "0123456789ABCDEF"
	n := min(len(v), 128)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(hexDigits[v[i]>>4])
		b.WriteByte(hexDigits[v[i]&0xf])
	}
	if n < len(v) {
		b.WriteString("...")
	}
}
