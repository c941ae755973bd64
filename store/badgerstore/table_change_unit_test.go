package badgerstore

import (
	"testing"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// TestStoredValuesReadable: a type may replace another under stored data
// only if Cassandra deems it compatible and it encodes values alike (what
// UpdateTable asks of store.CheckTableChange).
func TestStoredValuesReadable(t *testing.T) {
	for _, c := range []struct {
		previous, next string
		want           bool
	}{
		{"LongType", "LongType", true},
		{"UTF8Type", "BytesType", true},
		{"AsciiType", "BytesType", true},
		{"AsciiType", "UTF8Type", true},
		{"ReversedType(UTF8Type)", "ReversedType(BytesType)", true},
		{"CompositeType(UTF8Type,LongType)", "CompositeType(BytesType,LongType,UTF8Type)", true},
		{"LongType", "BytesType", false}, // compatible in no sense: names were LongType keys
		{"BytesType", "UTF8Type", false}, // same bytes, but names need not be UTF-8
		{"UTF8Type", "AsciiType", false}, // narrower
		{"Int32Type", "LongType", false}, // another encoding
		{"UTF8Type", "ReversedType(UTF8Type)", false},
		{"CompositeType(UTF8Type,LongType)", "CompositeType(UTF8Type)", false},
		{"CompositeType(UTF8Type,LongType)", "CompositeType(UTF8Type,BytesType)", false},
		{"TimeUUIDType", "UUIDType", false},
	} {
		prev, err := marshal.Parse(c.previous)
		if err != nil {
			t.Fatal(err)
		}
		next, err := marshal.Parse(c.next)
		if err != nil {
			t.Fatal(err)
		}
		if got := marshal.IsCompatibleWith(next, prev) && sameKeyEncoding(next, prev); got != c.want {
			t.Errorf("readable(%s, %s) = %v, want %v", c.next, c.previous, got, c.want)
		}
	}
}
