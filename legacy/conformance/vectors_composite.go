package conformance

import (
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// vecCompositeFile is composite_slices.json: raw-bound slices of a
// CompositeType(UTF8Type,LongType) row.
type vecCompositeFile struct {
	Comparator               string              `json:"comparator"`
	RowKeyHex                string              `json:"row_key_hex"`
	InsertedHexInInsertOrder []string            `json:"inserted_hex_in_insert_order"`
	StoredOrderHex           []string            `json:"stored_order_hex"`
	Queries                  []vecCompositeQuery `json:"queries"`
	NamesPredicates          []vecCompositeNames `json:"names_predicates"`
}

type vecCompositeQuery struct {
	Description string    `json:"description"`
	StartHex    string    `json:"start_hex"`
	FinishHex   string    `json:"finish_hex"`
	Reversed    bool      `json:"reversed"`
	Count       int32     `json:"count"`
	ResultHex   []string  `json:"result_hex"`
	GetCount    *int32    `json:"get_count"`
	Error       *vecError `json:"error"`
}

type vecCompositeNames struct {
	ColumnNamesHex []string `json:"column_names_hex"`
	ResultHex      []string `json:"result_hex"`
}

// vecError is an exception a vector recorded.
type vecError struct {
	Exception string `json:"exception"`
	Why       string `json:"why"`
}

func vecNamesHex(cs []*cassandra.ColumnOrSuperColumn) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, hex.EncodeToString(c.GetColumn().GetName()))
	}
	return out
}

// runCompositeVectors replays composite_slices.json: every query's result
// or error, and get_count with the same predicate.
func runCompositeVectors(t *testing.T, target Target, dir string) {
	var file vecCompositeFile
	vecLoad(t, dir, "composite_slices.json", &file)
	if len(file.Queries) == 0 || len(file.NamesPredicates) == 0 {
		t.Fatal("composite_slices.json has no queries")
	}
	e := NewEnv(t, target, Options{ClusterName: "vectors"})
	const keyspace, family = "vec_comp", "Composite1"
	vecCreateKeyspace(t, e.C, keyspace)
	vecAddFamily(t, e.C, keyspace, family, func(cf *cassandra.CfDef) { cf.ComparatorType = file.Comparator })
	parent := &cassandra.ColumnParent{ColumnFamily: family}
	key := vecKey(t, file.RowKeyHex)
	// expected is what the server returns of names Cassandra returned:
	// those names, or on a CQL backend their stored forms read back.
	expected := func(_ string, namesHex []string) []string { return namesHex }
	if p, ok := newPrefixNames(t, file.Comparator); ok && onBackend(t, target, "composite-prefix-names") {
		expected = func(query string, namesHex []string) []string {
			if names, ok := prefixNameResults[query]; ok {
				return names
			}
			return p.readAll(t, namesHex)
		}
	}
	// Values and timestamps are irrelevant to these vectors.
	for i, name := range file.InsertedHexInInsertOrder {
		col := &cassandra.Column{Name: vecName(t, name), Value: []byte("v"), Timestamp: vecPtr(int64(1000 + i))}
		if err := e.C.Insert(Ctx(t), key, parent, col, vecCL); err != nil {
			t.Fatalf("insert %s: %v", name, err)
		}
	}
	t.Run("StoredOrder", func(t *testing.T) {
		cols, err := e.C.GetSlice(Ctx(t), key, parent, vecFullRange(100000, false), vecCL)
		if err != nil {
			t.Fatalf("get_slice: %v", err)
		}
		if got, want := vecNamesHex(cols), expected("stored", file.StoredOrderHex); !slices.Equal(got, want) {
			t.Errorf("stored order:\n got  %v\n want %v", got, want)
		}
	})
	for i, q := range file.Queries {
		t.Run(fmt.Sprintf("%02d_%s", i, q.Description), func(t *testing.T) {
			pred := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{
				Start: vecName(t, q.StartHex), Finish: vecName(t, q.FinishHex), Reversed: q.Reversed, Count: q.Count,
			}}
			cols, err := e.C.GetSlice(Ctx(t), key, parent, pred, vecCL)
			if q.Error != nil {
				vecCheckOutcome(t, "get_slice", err, q.Error.Exception, q.Error.Why)
				return
			}
			if err != nil {
				t.Fatalf("get_slice: %v", err)
			}
			if got, want := vecNamesHex(cols), expected(fmt.Sprintf("%02d", i), q.ResultHex); !slices.Equal(got, want) {
				t.Errorf("get_slice:\n got  %v\n want %v", got, want)
			}
			if q.GetCount == nil {
				return
			}
			n, err := e.C.GetCount(Ctx(t), key, parent, pred, vecCL)
			if err != nil {
				t.Fatalf("get_count: %v", err)
			}
			if want := int32(len(expected(fmt.Sprintf("%02d", i), q.ResultHex))); len(q.ResultHex) == int(*q.GetCount) && n != want {
				t.Errorf("get_count %d, want %d", n, want)
			} else if len(q.ResultHex) != int(*q.GetCount) && n != *q.GetCount {
				t.Errorf("get_count %d, want %d", n, *q.GetCount)
			}
		})
	}
	for i, q := range file.NamesPredicates {
		t.Run(fmt.Sprintf("names_%d", i), func(t *testing.T) {
			names := [][]byte{}
			for _, n := range q.ColumnNamesHex {
				names = append(names, vecName(t, n))
			}
			cols, err := e.C.GetSlice(Ctx(t), key, parent, &cassandra.SlicePredicate{ColumnNames: names}, vecCL)
			if err != nil {
				t.Fatalf("get_slice %v: %v", q.ColumnNamesHex, err)
			}
			if got, want := vecNamesHex(cols), expected(fmt.Sprintf("names_%d", i), q.ResultHex); !slices.Equal(got, want) {
				t.Errorf("get_slice names %v:\n got  %v\n want %v", q.ColumnNamesHex, got, want)
			}
		})
	}
}
