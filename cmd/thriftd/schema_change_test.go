package main

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestUpdateColumnFamilyKeepsStoredDataReadable: over Thrift,
// system_update_column_family refuses a comparator, column type or counter
// change the stored data depends on with InvalidRequestException and
// Cassandra's reason (the engine's refusal, translated), leaves the family
// as it was, and the data stays readable; a compatible comparator change
// that stores names alike is accepted and reads back the same.
func TestUpdateColumnFamilyKeepsStoredDataReadable(t *testing.T) {
	ctx := context.Background()
	c := dialTest(t, daemontest.Start(t, daemontest.Config(t)))
	cf := func(name, comparator, validator string) *cassandra.CfDef {
		d := cassandra.NewCfDef()
		d.Keyspace, d.Name, d.ComparatorType = "ks", name, comparator
		if validator != "" {
			d.DefaultValidationClass = &validator
		}
		return d
	}
	if _, err := c.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: "ks", StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{
			cf("Longs", "LongType", ""), cf("Texts", "UTF8Type", ""), cf("Counters", "UTF8Type", "CounterColumnType"),
		}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetKeyspace(ctx, "ks"); err != nil {
		t.Fatal(err)
	}
	long := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	one := cassandra.ConsistencyLevel_ONE
	write := func(family string, names ...[]byte) {
		t.Helper()
		for i, n := range names {
			ts := int64(i + 1)
			if err := c.Insert(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: family},
				&cassandra.Column{Name: n, Value: []byte{'v', byte('0' + i)}, Timestamp: &ts}, one); err != nil {
				t.Fatalf("insert into %s: %v", family, err)
			}
		}
	}
	// readable checks a slice of the whole row and a read of each name.
	readable := func(family string, names ...[]byte) {
		t.Helper()
		got, err := c.GetSlice(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: family},
			&cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100}}, one)
		if err != nil {
			t.Fatalf("get_slice %s: %v", family, err)
		}
		if len(got) != len(names) {
			t.Fatalf("get_slice %s: %d columns, want %d", family, len(got), len(names))
		}
		for i, n := range names {
			if string(got[i].Column.Name) != string(n) || string(got[i].Column.Value) != string([]byte{'v', byte('0' + i)}) {
				t.Errorf("get_slice %s column %d: %x=%q", family, i, got[i].Column.Name, got[i].Column.Value)
			}
			cosc, err := c.Get(ctx, []byte("k"), &cassandra.ColumnPath{ColumnFamily: family, Column: n}, one)
			if err != nil {
				t.Errorf("get %s %x: %v", family, n, err)
			} else if string(cosc.Column.Value) != string([]byte{'v', byte('0' + i)}) {
				t.Errorf("get %s %x = %q", family, n, cosc.Column.Value)
			}
		}
	}
	describe := func(family string) *cassandra.CfDef {
		t.Helper()
		ks, err := c.DescribeKeyspace(ctx, "ks")
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ks.CfDefs {
			if d.Name == family {
				return d
			}
		}
		t.Fatalf("family %s not described", family)
		return nil
	}
	refused := func(what string, def *cassandra.CfDef, reason string) {
		t.Helper()
		_, err := c.SystemUpdateColumnFamily(ctx, def)
		var ire *cassandra.InvalidRequestException
		if !errors.As(err, &ire) || ire.Why != reason {
			t.Errorf("system_update_column_family %s: %v, want InvalidRequestException(%q)", what, err, reason)
		}
	}

	longs := [][]byte{long(-5), long(3), long(976)}
	write("Longs", longs...)
	def := describe("Longs")
	def.ComparatorType = "BytesType"
	refused("LongType to BytesType", def, "comparators do not match or are not compatible.")
	def = describe("Longs")
	def.ColumnType = "Super"
	refused("Standard to Super", def, "types do not match.")
	if got := describe("Longs"); !strings.HasSuffix(got.ComparatorType, "LongType") || got.ColumnType != "Standard" {
		t.Errorf("after refused updates Longs is %s %s", got.ColumnType, got.ComparatorType)
	}
	readable("Longs", longs...)
	// The family still takes writes, in LongType order.
	write("Longs", long(-5), long(3), long(976))
	readable("Longs", longs...)

	def = describe("Counters")
	bytesType := "BytesType"
	def.DefaultValidationClass = &bytesType
	refused("counter to regular", def, "types do not match.")
	if err := c.Add(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: "Counters"}, &cassandra.CounterColumn{Name: []byte("n"), Value: 2}, one); err != nil {
		t.Errorf("add after the refused update: %v", err)
	}

	texts := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	write("Texts", texts...)
	def = describe("Texts")
	def.ComparatorType = "BytesType"
	if _, err := c.SystemUpdateColumnFamily(ctx, def); err != nil {
		t.Fatalf("system_update_column_family UTF8Type to BytesType: %v", err)
	}
	if got := describe("Texts"); !strings.HasSuffix(got.ComparatorType, "BytesType") {
		t.Errorf("after the update Texts has comparator %s", got.ComparatorType)
	}
	readable("Texts", texts...)
}
