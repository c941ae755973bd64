package marshal

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestDecodeKeyAllocatesNothing decodes names of the comparators of most
// Thrift-era families into a buffer with room: a slice decodes every cell
// name it returns, and an allocation there is one per cell.
func TestDecodeKeyAllocatesNothing(t *testing.T) {
	timeUUID := []byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	composite := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
			b = append(append(b, p...), 0)
		}
		return b
	}
	long := binary.BigEndian.AppendUint64(nil, 1234567)
	for _, c := range []struct {
		comparator string
		name       []byte
	}{
		{"BytesType", []byte("c\x00\xff")},
		{"UTF8Type", []byte("système")},
		{"AsciiType", []byte("name")},
		{"LongType", long},
		{"TimeUUIDType", timeUUID},
		{"ReversedType(TimeUUIDType)", timeUUID},
		{"CompositeType(UTF8Type,ReversedType(TimeUUIDType),LongType)", composite([]byte("a"), timeUUID, long)},
	} {
		typ, err := Parse(c.comparator)
		if err != nil {
			t.Fatal(err)
		}
		key := typ.AppendKey(nil, c.name)
		dst := make([]byte, 0, 256)
		var got []byte
		allocs := testing.AllocsPerRun(100, func() {
			got, _, err = typ.DecodeKey(dst[:0], key)
		})
		if err != nil || !bytes.Equal(got, c.name) {
			t.Fatalf("%s: decoded %x, %v; want %x", c.comparator, got, err, c.name)
		}
		if allocs != 0 {
			t.Errorf("%s: %v allocations a name", c.comparator, allocs)
		}
	}
}
