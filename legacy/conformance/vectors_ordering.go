package conformance

import (
	"encoding/hex"
	"reflect"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// vecOrderingFile is ordering.json: one Standard family per comparator.
type vecOrderingFile struct {
	Types []vecOrderingType `json:"types"`
}

type vecOrderingType struct {
	Comparator              string    `json:"comparator"`
	DescribedComparatorType string    `json:"described_comparator_type"`
	ColumnFamily            string    `json:"column_family"`
	Inserted                []vecCell `json:"inserted"`
	Rejected                []struct {
		NameHex   string `json:"name_hex"`
		Exception string `json:"exception"`
		Why       string `json:"why"`
	} `json:"rejected"`
	CassandraOrderHex []string  `json:"cassandra_order_hex"`
	CassandraOrder    []vecCell `json:"cassandra_order"`
	EqualGroups       []struct {
		InsertedNamesHexInInsertOrder []string `json:"inserted_names_hex_in_insert_order"`
		ReturnedNameHex               string   `json:"returned_name_hex"`
		ReturnedValueHex              string   `json:"returned_value_hex"`
	} `json:"equal_groups"`
	ReversedIsExactReverse bool         `json:"reversed_is_exact_reverse"`
	GetCount               int32        `json:"get_count"`
	Described              vecDescribed `json:"described"`
}

// vecDescribed is what describe_keyspace reported for a family.
type vecDescribed struct {
	ColumnType             string  `json:"column_type"`
	ComparatorType         *string `json:"comparator_type"`
	SubcomparatorType      *string `json:"subcomparator_type"`
	KeyValidationClass     string  `json:"key_validation_class"`
	DefaultValidationClass string  `json:"default_validation_class"`
}

// vecCheckDescribed compares a described family with a vector's record.
func vecCheckDescribed(t *testing.T, cf *cassandra.CfDef, want vecDescribed) {
	t.Helper()
	if cf.ColumnType != want.ColumnType {
		t.Errorf("described column_type %q, want %q", cf.ColumnType, want.ColumnType)
	}
	if want.ComparatorType != nil && cf.ComparatorType != *want.ComparatorType {
		t.Errorf("described comparator_type %q, want %q", cf.ComparatorType, *want.ComparatorType)
	}
	if got, want := vecStringOrUnset(cf.SubcomparatorType), vecStringOrUnset(want.SubcomparatorType); got != want {
		t.Errorf("described subcomparator_type %s, want %s", got, want)
	}
	if got := vecStringOrUnset(cf.KeyValidationClass); got != want.KeyValidationClass {
		t.Errorf("described key_validation_class %s, want %s", got, want.KeyValidationClass)
	}
	if got := vecStringOrUnset(cf.DefaultValidationClass); got != want.DefaultValidationClass {
		t.Errorf("described default_validation_class %s, want %s", got, want.DefaultValidationClass)
	}
}

func vecStringOrUnset(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

// runOrderingVectors replays ordering.json end to end: every comparator's
// family gets its names inserted one by one and read back in one slice.
func runOrderingVectors(t *testing.T, target Target, dir string) {
	var file vecOrderingFile
	vecLoad(t, dir, "ordering.json", &file)
	if len(file.Types) == 0 {
		t.Fatal("ordering.json has no types")
	}
	e := NewEnv(t, target, Options{ClusterName: "vectors"})
	const keyspace = "vec_order"
	vecCreateKeyspace(t, e.C, keyspace)
	for _, typ := range file.Types {
		t.Run(typ.Comparator, func(t *testing.T) {
			vecRunOrderingType(t, e, keyspace, typ)
		})
	}
}

func vecRunOrderingType(t *testing.T, e *Env, keyspace string, typ vecOrderingType) {
	c := e.C
	vecAddFamily(t, c, keyspace, typ.ColumnFamily, func(cf *cassandra.CfDef) { cf.ComparatorType = typ.Comparator })
	parent := &cassandra.ColumnParent{ColumnFamily: typ.ColumnFamily}
	key := []byte("k")

	// DateType is described back as TimestampType, as 3.11 does: the
	// vector's described_comparator_type already says so.
	cf := vecDescribedFamily(t, c, keyspace, typ.ColumnFamily)
	if cf.ComparatorType != typ.DescribedComparatorType {
		t.Errorf("describe_keyspace comparator_type %q, want %q", cf.ComparatorType, typ.DescribedComparatorType)
	}
	vecCheckDescribed(t, cf, typ.Described)

	for _, r := range typ.Rejected {
		col := &cassandra.Column{Name: vecName(t, r.NameHex), Value: []byte("v"), Timestamp: vecPtr(int64(1))}
		err := c.Insert(Ctx(t), key, parent, col, vecCL)
		vecCheckOutcome(t, "insert rejected name "+r.NameHex, err, r.Exception, r.Why)
	}
	for _, in := range typ.Inserted {
		col := &cassandra.Column{Name: vecName(t, in.NameHex), Value: vecName(t, in.ValueHex), Timestamp: vecPtr(in.Timestamp)}
		if err := c.Insert(Ctx(t), key, parent, col, vecCL); err != nil {
			t.Fatalf("insert %s: %v", in.NameHex, err)
		}
	}

	// Names a comparator holds equal share one column; which member's
	// bytes come back depends on the storage state, so any member will do.
	group := map[string]int{}
	for i, g := range typ.EqualGroups {
		for _, n := range g.InsertedNamesHexInInsertOrder {
			group[n] = i
		}
	}
	sameName := func(got, want string) bool {
		if got == want {
			return true
		}
		gw, okw := group[want]
		gg, okg := group[got]
		return okw && okg && gw == gg
	}

	if p, ok := newPrefixNames(t, typ.Comparator); ok && onBackend(t, e.Target, "composite-prefix-names") {
		// Names of fewer components share the cell of the name they are
		// a prefix of, padded with empty components.
		typ.CassandraOrder = p.cells(t, typ.CassandraOrder)
		typ.CassandraOrderHex = nil
		for _, cell := range typ.CassandraOrder {
			typ.CassandraOrderHex = append(typ.CassandraOrderHex, cell.NameHex)
		}
		typ.GetCount = int32(len(typ.CassandraOrder))
		for i := range typ.EqualGroups {
			g := &typ.EqualGroups[i]
			if cell, ok := p.find(t, typ.CassandraOrder, g.ReturnedNameHex); ok {
				g.ReturnedNameHex, g.ReturnedValueHex = cell.NameHex, cell.ValueHex
			}
		}
	}
	forward, err := c.GetSlice(Ctx(t), key, parent, vecFullRange(100000, false), vecCL)
	if err != nil {
		t.Fatalf("get_slice: %v", err)
	}
	if len(typ.CassandraOrder) != len(typ.CassandraOrderHex) {
		t.Fatalf("vector inconsistent: %d names in cassandra_order_hex, %d in cassandra_order", len(typ.CassandraOrderHex), len(typ.CassandraOrder))
	}
	if len(forward) != len(typ.CassandraOrder) {
		t.Errorf("get_slice returned %d columns, want %d", len(forward), len(typ.CassandraOrder))
	}
	for i := 0; i < min(len(forward), len(typ.CassandraOrder)); i++ {
		want := typ.CassandraOrder[i]
		col := forward[i].Column
		if col == nil {
			t.Errorf("column %d: not a column: %v", i, forward[i])
			continue
		}
		got := hex.EncodeToString(col.Name)
		if !sameName(got, typ.CassandraOrderHex[i]) || !sameName(got, want.NameHex) {
			t.Errorf("column %d: name %s, want %s (or a name equal to it)", i, got, typ.CassandraOrderHex[i])
		}
		if gv := hex.EncodeToString(col.Value); gv != want.ValueHex {
			t.Errorf("column %d (%s): value %s, want %s", i, got, gv, want.ValueHex)
		}
		if col.Timestamp == nil || *col.Timestamp != want.Timestamp {
			t.Errorf("column %d (%s): timestamp %v, want %d", i, got, col.Timestamp, want.Timestamp)
		}
		if col.TTL != nil {
			t.Errorf("column %d (%s): ttl %d, want none", i, got, *col.TTL)
		}
	}

	reversed, err := c.GetSlice(Ctx(t), key, parent, vecFullRange(100000, true), vecCL)
	if err != nil {
		t.Fatalf("reversed get_slice: %v", err)
	}
	if typ.ReversedIsExactReverse {
		if len(reversed) != len(forward) {
			t.Errorf("reversed get_slice returned %d columns, forward %d", len(reversed), len(forward))
		}
		for i := 0; i < min(len(reversed), len(forward)); i++ {
			r, f := vecCoscJSON(reversed[i]), vecCoscJSON(forward[len(forward)-1-i])
			if !reflect.DeepEqual(r, f) {
				t.Errorf("reversed column %d is %v, forward column %d is %v", i, r, len(forward)-1-i, f)
			}
		}
	}

	n, err := c.GetCount(Ctx(t), key, parent, vecFullRange(100000, false), vecCL)
	if err != nil {
		t.Fatalf("get_count: %v", err)
	}
	if n != typ.GetCount {
		t.Errorf("get_count %d, want %d", n, typ.GetCount)
	}

	// get() of any member of an equal group finds the group's one cell.
	for _, g := range typ.EqualGroups {
		for _, name := range g.InsertedNamesHexInInsertOrder {
			got, err := c.Get(Ctx(t), key, &cassandra.ColumnPath{ColumnFamily: typ.ColumnFamily, Column: vecName(t, name)}, vecCL)
			if err != nil {
				t.Errorf("get equal name %s: %v", name, err)
				continue
			}
			if gv := hex.EncodeToString(got.GetColumn().GetValue()); gv != g.ReturnedValueHex {
				t.Errorf("get equal name %s: value %s, want %s", name, gv, g.ReturnedValueHex)
			}
			if gn := hex.EncodeToString(got.GetColumn().GetName()); !sameName(gn, g.ReturnedNameHex) {
				t.Errorf("get equal name %s: name %s is not of the group", name, gn)
			}
		}
	}
}

func vecPtr[T any](v T) *T { return &v }
