package replywire

import (
	"encoding/binary"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Field appends a field's header: its type, then its id.
func Field(dst []byte, typ thrift.TType, id int16) []byte {
	return append(dst, byte(typ), byte(uint16(id)>>8), byte(id))
}

// Binary appends a binary value: its length, then its bytes.
func Binary(dst, v []byte) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(v))), v...)
}

// ListBegin appends the header of a list of n elements of type elem. A
// list whose length is known only once its elements are appended is
// begun with 0 and given its length by SetListLength.
func ListBegin(dst []byte, elem thrift.TType, n int) []byte {
	return binary.BigEndian.AppendUint32(append(dst, byte(elem)), uint32(n))
}

// SetListLength sets the length of the list whose header ListBegin
// appended at list[0:].
func SetListLength(list []byte, n int) {
	binary.BigEndian.PutUint32(list[1:5], uint32(n))
}

// MapBegin appends the header of a map of n entries, of the given key
// and value types. A map whose length is known only once its entries are
// appended is begun with 0 and given its length by SetMapLength.
func MapBegin(dst []byte, key, value thrift.TType, n int) []byte {
	return binary.BigEndian.AppendUint32(append(dst, byte(key), byte(value)), uint32(n))
}

// SetMapLength sets the length of the map whose header MapBegin appended
// at m[0:].
func SetMapLength(m []byte, n int) {
	binary.BigEndian.PutUint32(m[2:6], uint32(n))
}

// list appends a list of structs, each appended by write.
func list[T any](dst []byte, items []*T, write func([]byte, *T) []byte) []byte {
	dst = ListBegin(dst, thrift.STRUCT, len(items))
	for _, it := range items {
		dst = write(dst, it)
	}
	return dst
}

// Column appends a Column.
func Column(dst []byte, c *cassandra.Column) []byte {
	if c != nil {
		dst = Binary(Field(dst, thrift.STRING, 1), c.Name)
		if c.Value != nil {
			dst = Binary(Field(dst, thrift.STRING, 2), c.Value)
		}
		if c.Timestamp != nil {
			dst = binary.BigEndian.AppendUint64(Field(dst, thrift.I64, 3), uint64(*c.Timestamp))
		}
		if c.TTL != nil {
			dst = binary.BigEndian.AppendUint32(Field(dst, thrift.I32, 4), uint32(*c.TTL))
		}
	}
	return append(dst, thrift.STOP)
}

// SuperColumn appends a SuperColumn.
func SuperColumn(dst []byte, s *cassandra.SuperColumn) []byte {
	if s != nil {
		dst = Binary(Field(dst, thrift.STRING, 1), s.Name)
		dst = list(Field(dst, thrift.LIST, 2), s.Columns, Column)
	}
	return append(dst, thrift.STOP)
}

// CounterColumn appends a CounterColumn.
func CounterColumn(dst []byte, c *cassandra.CounterColumn) []byte {
	if c != nil {
		dst = Binary(Field(dst, thrift.STRING, 1), c.Name)
		dst = binary.BigEndian.AppendUint64(Field(dst, thrift.I64, 2), uint64(c.Value))
	}
	return append(dst, thrift.STOP)
}

// CounterSuperColumn appends a CounterSuperColumn.
func CounterSuperColumn(dst []byte, s *cassandra.CounterSuperColumn) []byte {
	if s != nil {
		dst = Binary(Field(dst, thrift.STRING, 1), s.Name)
		dst = list(Field(dst, thrift.LIST, 2), s.Columns, CounterColumn)
	}
	return append(dst, thrift.STOP)
}

// ColumnOrSuperColumn appends a ColumnOrSuperColumn.
func ColumnOrSuperColumn(dst []byte, c *cassandra.ColumnOrSuperColumn) []byte {
	if c != nil {
		if c.Column != nil {
			dst = Column(Field(dst, thrift.STRUCT, 1), c.Column)
		}
		if c.SuperColumn != nil {
			dst = SuperColumn(Field(dst, thrift.STRUCT, 2), c.SuperColumn)
		}
		if c.CounterColumn != nil {
			dst = CounterColumn(Field(dst, thrift.STRUCT, 3), c.CounterColumn)
		}
		if c.CounterSuperColumn != nil {
			dst = CounterSuperColumn(Field(dst, thrift.STRUCT, 4), c.CounterSuperColumn)
		}
	}
	return append(dst, thrift.STOP)
}

// Columns appends a list<ColumnOrSuperColumn>: get_slice's reply, and
// each row of a list of KeySlice or of multiget_slice's map.
func Columns(dst []byte, cs []*cassandra.ColumnOrSuperColumn) []byte {
	return list(dst, cs, ColumnOrSuperColumn)
}

// KeySlice appends a KeySlice.
func KeySlice(dst []byte, k *cassandra.KeySlice) []byte {
	if k != nil {
		dst = Binary(Field(dst, thrift.STRING, 1), k.Key)
		dst = Columns(Field(dst, thrift.LIST, 2), k.Columns)
	}
	return append(dst, thrift.STOP)
}

// KeySlices appends a list<KeySlice>: the reply of get_range_slices,
// get_paged_slice and get_indexed_slices.
func KeySlices(dst []byte, ks []*cassandra.KeySlice) []byte {
	return list(dst, ks, KeySlice)
}

// ColumnsByKey appends a map<binary, list<ColumnOrSuperColumn>>:
// multiget_slice's reply, its entries in the map's order as the
// generated writer takes them.
func ColumnsByKey(dst []byte, m map[string][]*cassandra.ColumnOrSuperColumn) []byte {
	dst = MapBegin(dst, thrift.STRING, thrift.LIST, len(m))
	for k, cs := range m {
		dst = append(binary.BigEndian.AppendUint32(dst, uint32(len(k))), k...)
		dst = Columns(dst, cs)
	}
	return dst
}
