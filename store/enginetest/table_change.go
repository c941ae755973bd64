package enginetest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

func longName(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// compositeName builds a CompositeType name: per component a 2-byte length,
// the bytes and an end-of-component byte of 0.
func compositeName(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
		b = append(append(b, p...), 0)
	}
	return b
}

func indexed(name []byte, validator string) store.ColumnDef {
	kind := int32(0)
	return store.ColumnDef{Name: name, Validator: validator, IndexType: &kind}
}

// testUpdateTableRefusesWhatStoredDataDependsOn: the engine itself, not
// only the Thrift handler, refuses a family update under which the data
// already stored would no longer read back (a LongType family turned
// BytesType failed its slices with "marshal: corrupt key" and its reads by
// name found nothing). The refused update changes nothing.
func testUpdateTableRefusesWhatStoredDataDependsOn(t *testing.T, h *Harness) {
	cases := []struct {
		name   string
		create store.TableDef
		update func(d *store.TableDef)
		prop   store.TableProperty
	}{
		{"LongType to BytesType", store.TableDef{Comparator: "LongType"},
			func(d *store.TableDef) { d.Comparator = "BytesType" }, store.PropComparator},
		{"BytesType to UTF8Type", store.TableDef{Comparator: "BytesType"},
			func(d *store.TableDef) { d.Comparator = "UTF8Type" }, store.PropComparator},
		{"UTF8Type to LongType", store.TableDef{Comparator: "UTF8Type"},
			func(d *store.TableDef) { d.Comparator = "LongType" }, store.PropComparator},
		{"reversed to plain", store.TableDef{Comparator: "ReversedType(UTF8Type)"},
			func(d *store.TableDef) { d.Comparator = "UTF8Type" }, store.PropComparator},
		{"composite losing a component", store.TableDef{Comparator: "CompositeType(UTF8Type,LongType)"},
			func(d *store.TableDef) { d.Comparator = "CompositeType(UTF8Type)" }, store.PropComparator},
		{"Standard to Super", store.TableDef{Comparator: "UTF8Type"},
			func(d *store.TableDef) { d.Super, d.SubComparator = true, "UTF8Type" }, store.PropColumnType},
		{"Super to Standard", store.TableDef{Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"},
			func(d *store.TableDef) { d.Super, d.SubComparator = false, "" }, store.PropColumnType},
		{"subcomparator LongType to UTF8Type", store.TableDef{Super: true, Comparator: "UTF8Type", SubComparator: "LongType"},
			func(d *store.TableDef) { d.SubComparator = "UTF8Type" }, store.PropSubComparator},
		{"counter to regular", store.TableDef{Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"},
			func(d *store.TableDef) { d.DefaultValidator = "BytesType" }, store.PropCounter},
		{"regular to counter", store.TableDef{Comparator: "UTF8Type"},
			func(d *store.TableDef) { d.DefaultValidator = "CounterColumnType" }, store.PropCounter},
		{"indexed column LongType to BytesType", store.TableDef{Comparator: "UTF8Type", Columns: []store.ColumnDef{indexed([]byte("age"), "LongType")}},
			func(d *store.TableDef) { d.Columns = []store.ColumnDef{indexed([]byte("age"), "BytesType")} }, store.PropIndexedValidator},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEnv(t, h)
			def := c.create
			def.Name = "cf"
			tb := f.table(def)
			row := storeSample(f, tb)
			before := f.e.Catalog().Version

			next := tb.Def
			c.update(&next)
			err := f.e.UpdateTable(context.Background(), next)
			var ice *store.IncompatibleChangeError
			if !errors.As(err, &ice) || !errors.Is(err, store.ErrIncompatibleChange) {
				t.Errorf("UpdateTable = %v, want an *store.IncompatibleChangeError", err)
			} else if ice.Property != c.prop || ice.Keyspace != "ks" || ice.Table != "cf" {
				t.Errorf("refused %s of %s.%s, want %s of ks.cf", ice.Property, ice.Keyspace, ice.Table, c.prop)
			}
			if f.e.Catalog().Version != before {
				t.Error("a refused update changed the schema version")
			}
			now, _ := f.e.Catalog().Table("ks", "cf")
			if !reflect.DeepEqual(now.Def, tb.Def) {
				t.Errorf("a refused update changed the definition:\n got %+v\nwant %+v", now.Def, tb.Def)
			}
			row.check(t, f, now)
		})
	}
}

// testUpdateTableAllowsChangesThatKeepDataReadable: a change to a
// compatible type whose encoding of every existing value is the same is
// accepted, and the data reads back, by slice and by name, alongside what
// is written after it.
func testUpdateTableAllowsChangesThatKeepDataReadable(t *testing.T, h *Harness) {
	cases := []struct {
		name   string
		create store.TableDef
		update func(d *store.TableDef)
	}{
		{"UTF8Type to BytesType", store.TableDef{Comparator: "UTF8Type"},
			func(d *store.TableDef) { d.Comparator = "BytesType" }},
		{"AsciiType to UTF8Type", store.TableDef{Comparator: "AsciiType"},
			func(d *store.TableDef) { d.Comparator = "UTF8Type" }},
		{"reversed UTF8Type to reversed BytesType", store.TableDef{Comparator: "ReversedType(UTF8Type)"},
			func(d *store.TableDef) { d.Comparator = "ReversedType(BytesType)" }},
		{"composite gaining a component", store.TableDef{Comparator: "CompositeType(UTF8Type,LongType)"},
			func(d *store.TableDef) { d.Comparator = "CompositeType(BytesType,LongType,UTF8Type)" }},
		{"subcomparator UTF8Type to BytesType", store.TableDef{Super: true, Comparator: "LongType", SubComparator: "UTF8Type"},
			func(d *store.TableDef) { d.SubComparator = "BytesType" }},
		{"key validator", store.TableDef{Comparator: "LongType", KeyValidator: "BytesType"},
			func(d *store.TableDef) { d.KeyValidator = "UTF8Type" }},
		{"default validator of a regular family", store.TableDef{Comparator: "LongType", DefaultValidator: "BytesType"},
			func(d *store.TableDef) { d.DefaultValidator = "UTF8Type" }},
		{"indexed column UTF8Type to BytesType", store.TableDef{Comparator: "UTF8Type", Columns: []store.ColumnDef{indexed([]byte("age"), "UTF8Type")}},
			func(d *store.TableDef) { d.Columns = []store.ColumnDef{indexed([]byte("age"), "BytesType")} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newEnv(t, h)
			def := c.create
			def.Name = "cf"
			tb := f.table(def)
			row := storeSample(f, tb)
			next := tb.Def
			c.update(&next)
			if next.Comparator != tb.Def.Comparator || next.SubComparator != tb.Def.SubComparator {
				f.need(f.caps().RetypeNames, "RetypeNames", "a comparator or subcomparator changed to a compatible type")
			}
			if err := f.e.UpdateTable(context.Background(), next); err != nil {
				t.Fatalf("UpdateTable: %v", err)
			}
			now, _ := f.e.Catalog().Table("ks", "cf")
			if !reflect.DeepEqual(now.Def, next) {
				t.Fatalf("definition after update:\n got %+v\nwant %+v", now.Def, next)
			}
			row.check(t, f, now)
			// A write after the change sorts among the old cells.
			row.addMiddle(f, now)
			row.check(t, f, now)
		})
	}
}

// sample is what storeSample wrote to one row: names in comparator order.
type sample struct {
	names  [][]byte // cell names (subcolumn names in a Super family)
	super  []byte   // the super column, in a Super family
	values []string
	middle []byte // a name that sorts between names[0] and names[1]
}

// storeSample writes three cells (or subcolumns, or counters) to row "k"
// of tb, with names valid under tb's name type, and returns them.
func storeSample(f *env, tb *store.Table) *sample {
	f.t.Helper()
	s := &sample{}
	nameType := tb.CellNameType().Name()
	switch {
	case strings.Contains(nameType, "CompositeType"):
		s.names = [][]byte{compositeName([]byte("a"), longName(1)), compositeName([]byte("a"), longName(3)), compositeName([]byte("b"), longName(2))}
		s.middle = compositeName([]byte("a"), longName(2))
	case strings.Contains(nameType, "LongType"):
		s.names = [][]byte{longName(-5), longName(3), longName(976)}
		s.middle = longName(0)
	default:
		s.names = [][]byte{[]byte("a"), []byte("c"), []byte("e")}
		s.middle = []byte("b")
	}
	if strings.HasPrefix(nameType, "org.apache.cassandra.db.marshal.ReversedType") {
		s.names[0], s.names[2] = s.names[2], s.names[0]
		s.middle = []byte("d")
	}
	if tb.Def.Super {
		if strings.Contains(tb.Comparator.Name(), "LongType") {
			s.super = longName(7)
		} else {
			s.super = []byte("sc")
		}
	}
	m := store.RowMutation{Table: tb, Key: []byte("k")}
	for i, n := range s.names {
		var op store.Op
		if tb.Counter {
			op = store.Op{Kind: store.OpCounterAdd, Name: n, Delta: int64(i + 1)}
			s.values = append(s.values, fmt.Sprint(i+1))
		} else {
			v := fmt.Sprintf("v%d", i)
			if tb.IndexedColumn([]byte("age")) && i == 0 {
				// A cell of the indexed column, with a value valid as a long.
				m.Ops = append(m.Ops, store.Op{Kind: store.OpPut, Name: []byte("age"), Value: longName(42), Timestamp: 1})
			}
			op = store.Op{Kind: store.OpPut, Name: n, Value: []byte(v), Timestamp: 1}
			s.values = append(s.values, v)
		}
		op.Super = s.super
		m.Ops = append(m.Ops, op)
	}
	f.apply(m)
	return s
}

// addMiddle writes a cell between the first two.
func (s *sample) addMiddle(f *env, tb *store.Table) {
	f.t.Helper()
	op := store.Op{Kind: store.OpPut, Super: s.super, Name: s.middle, Value: []byte("mid"), Timestamp: 2}
	if tb.Counter {
		op = store.Op{Kind: store.OpCounterAdd, Super: s.super, Name: s.middle, Delta: 100}
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{op}})
	s.names = append([][]byte{s.names[0], s.middle}, s.names[1:]...)
	v := "mid"
	if tb.Counter {
		v = "100"
	}
	s.values = append([]string{s.values[0], v}, s.values[1:]...)
}

// check reads the sample back through tb: a full slice in order, and each
// cell by name; and, if tb indexes "age", the row through the index.
func (s *sample) check(t *testing.T, f *env, tb *store.Table) {
	t.Helper()
	value := func(c store.Cell) string {
		if tb.Counter {
			return fmt.Sprint(c.CounterValue)
		}
		return string(c.Value)
	}
	var got []string
	for _, c := range f.slice(tb, "k", store.SliceQuery{Super: s.super, Count: all}).Cells {
		if string(c.Name) != "age" {
			got = append(got, value(c))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(s.values) {
		t.Errorf("slice: %v, want %v", got, s.values)
	}
	for i, n := range s.names {
		res := f.slice(tb, "k", store.SliceQuery{Super: s.super, Names: [][]byte{n}, Count: all})
		if len(res.Cells) != 1 || value(res.Cells[0]) != s.values[i] {
			t.Errorf("read of name %x: %s, want %s", n, CellsString(res.Cells), s.values[i])
		}
	}
	if tb.IndexedColumn([]byte("age")) {
		var keys []string
		var res store.SliceResult
		q := &store.ScanQuery{Filter: []store.Expression{{Column: []byte("age"), Op: store.ExprEQ, Value: longName(42)}}}
		err := f.e.Scan(context.Background(), tb, q, &res, func(key []byte) (bool, error) {
			keys = append(keys, string(key))
			return true, nil
		})
		if err != nil || fmt.Sprint(keys) != "[k]" {
			t.Errorf("index lookup: %v, %v; want [k]", keys, err)
		}
	}
}
