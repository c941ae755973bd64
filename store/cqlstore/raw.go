package cqlstore

import (
	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// raw is a value already in the CQL wire form of its column's type: the
// bytes of a legacy cell name, key or value travel as they are (every
// legacy marshal type serialises as its CQL counterpart does). An empty
// value stays an empty value, never null.
type raw []byte

// MarshalCQL implements gocql.Marshaler.
func (r raw) MarshalCQL(gocql.TypeInfo) ([]byte, error) {
	if r == nil {
		return []byte{}, nil
	}
	return r, nil
}

// rawDest receives a column's bytes as they came on the wire; null
// leaves it nil.
type rawDest struct{ b []byte }

// UnmarshalCQL implements gocql.Unmarshaler.
func (r *rawDest) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		r.b = nil
		return nil
	}
	r.b = append(r.b[:0], data...)
	if r.b == nil {
		r.b = []byte{}
	}
	return nil
}

// composite joins component values into a CompositeType value (each
// component with its length and an end-of-component byte of 0).
func composite(dst []byte, parts [][]byte) []byte {
	for _, p := range parts {
		dst = append(dst, byte(len(p)>>8), byte(len(p)))
		dst = append(dst, p...)
		dst = append(dst, 0)
	}
	return dst
}
