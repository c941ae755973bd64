package cqlsink

import (
	"bytes"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// TestBoundValueMarshalCQL checks that values bind as their raw bytes and
// that an empty value stays empty, not null.
func TestBoundValueMarshalCQL(t *testing.T) {
	vals := []migrate.Value{
		{Type: marshal.LongType{}, Bytes: []byte{0, 0, 0, 0, 0, 0, 0, 5}},
		{Type: marshal.BytesType{}},
	}
	bound := args(vals)
	m, ok := bound[0].(gocql.Marshaler)
	if !ok {
		t.Fatalf("a bound value is a %T, not a gocql.Marshaler", bound[0])
	}
	b, err := m.MarshalCQL(nil)
	if err != nil || !bytes.Equal(b, vals[0].Bytes) {
		t.Errorf("MarshalCQL = %x, %v", b, err)
	}
	b, err = bound[1].(gocql.Marshaler).MarshalCQL(nil)
	if err != nil || b == nil || len(b) != 0 {
		t.Errorf("empty MarshalCQL = %#v, %v; want a non-nil empty slice", b, err)
	}
}
