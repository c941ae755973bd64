package cqlsink

import (
	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/migrate"
)

// boundValue is a migrate.Value as gocql binds it: its bytes, already in
// the CQL wire form of its type, go on the wire as they are.
type boundValue migrate.Value

// MarshalCQL implements gocql.Marshaler. An empty value stays an empty
// value (never null).
func (v *boundValue) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	if v.Bytes == nil {
		return []byte{}, nil
	}
	return v.Bytes, nil
}

// args passes vals to gocql by pointer: boxing a value itself copies it
// to the heap, an allocation per value.
func args(vals []migrate.Value) []any {
	out := make([]any, len(vals))
	for i := range vals {
		out[i] = (*boundValue)(&vals[i])
	}
	return out
}
