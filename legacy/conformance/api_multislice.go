package conformance

import (
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func columnSlice(start, finish string) *cassandra.ColumnSlice {
	return &cassandra.ColumnSlice{Start: b(start), Finish: b(finish)}
}

func runMultiSliceTests(t *testing.T, target Target) {
	t.Run("Ranges", func(t *testing.T) {
		a := newKeyspaceEnv(t, target, Options{}, "Keyspace1", standardCF("Standard1"), superCF("Super1"))
		for i, n := range []string{"a", "b", "c", "d", "e", "f"} {
			a.insert("abc", parent("Standard1"), col(b(n), []byte{byte('1' + i)}, 0))
		}
		multi := func(reversed bool, count int32, slices ...*cassandra.ColumnSlice) []string {
			t.Helper()
			req := &cassandra.MultiSliceRequest{Key: b("abc"), ColumnParent: parent("Standard1"), ColumnSlices: slices,
				Reversed: reversed, Count: count, ConsistencyLevel: one}
			got, err := a.C.GetMultiSlice(Ctx(t), req)
			expectOK(t, "get_multi_slice", err)
			return names(got)
		}
		equalStrings(t, "two ranges", multi(false, 10, columnSlice("a", "c"), columnSlice("e", "f")), []string{"a", "b", "c", "e", "f"})
		equalStrings(t, "ranges out of order", multi(false, 10, columnSlice("e", "f"), columnSlice("a", "c")), []string{"a", "b", "c", "e", "f"})
		equalStrings(t, "overlapping ranges", multi(false, 10, columnSlice("a", "c"), columnSlice("b", "d")), []string{"a", "b", "c", "d"})
		equalStrings(t, "count", multi(false, 3, columnSlice("a", "c"), columnSlice("e", "f")), []string{"a", "b", "c"})
		if a.Diverges("multislice-reversed") {
			equalStrings(t, "reversed", multi(true, 10, columnSlice("f", "e"), columnSlice("c", "a")), []string{"b"})
			equalStrings(t, "reversed single slice", multi(true, 10, columnSlice("f", "a")), []string{"e", "d", "c", "b"})
		} else {
			equalStrings(t, "reversed", multi(true, 10, columnSlice("f", "e"), columnSlice("c", "a")), []string{"f", "e", "c", "b", "a"})
			equalStrings(t, "reversed count", multi(true, 2, columnSlice("f", "e"), columnSlice("c", "a")), []string{"f", "e"})
			equalStrings(t, "reversed single slice", multi(true, 10, columnSlice("f", "a")), []string{"f", "e", "d", "c", "b", "a"})
		}
		equalStrings(t, "open bounds", multi(false, 10, columnSlice("", "b"), columnSlice("e", "")), []string{"a", "b", "e", "f"})
		equalStrings(t, "whole row", multi(false, 100, columnSlice("", "")), []string{"a", "b", "c", "d", "e", "f"})
		got, err := a.C.GetMultiSlice(Ctx(t), &cassandra.MultiSliceRequest{Key: b("abc"), ColumnParent: parent("Standard1"),
			ColumnSlices: []*cassandra.ColumnSlice{columnSlice("c", "a")}, Count: 10, ConsistencyLevel: one})
		expectIRE(t, "forward slice with start after finish", err, "")
		if err == nil {
			t.Logf("answer: %v", names(got))
		}
		_, err = a.C.GetMultiSlice(Ctx(t), &cassandra.MultiSliceRequest{Key: b("abc"), ColumnParent: superParent("Super1", b("sc")),
			ColumnSlices: []*cassandra.ColumnSlice{columnSlice("a", "c")}, Count: 10, ConsistencyLevel: one})
		expectIRE(t, "get_multi_slice on a Super family", err, "")
	})
}
