package slabprotocol

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
)

// readAllBinary reads binary fields from data until an error, with the
// protocol pf makes.
func readAllBinary(pf thrift.TProtocolFactory, data []byte) ([][]byte, error) {
	p := pf.GetProtocol(thrift.NewStreamTransportR(bytes.NewReader(data)))
	var out [][]byte
	for {
		b, err := p.ReadBinary(context.Background())
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
}

func encodeFields(fields ...[]byte) []byte {
	var buf []byte
	for _, f := range fields {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(f)))
		buf = append(buf, f...)
	}
	return buf
}

func TestReadsWhatTheLibraryReads(t *testing.T) {
	conf := &thrift.TConfiguration{}
	fields := [][]byte{{}, []byte("a"), bytes.Repeat([]byte("b"), slabSize/4), bytes.Repeat([]byte("c"), slabSize/4+1),
		bytes.Repeat([]byte("d"), slabSize+1), []byte("tail")}
	got, err := readAllBinary(NewFactory(conf), encodeFields(fields...))
	if len(got) != len(fields) {
		t.Fatalf("read %d fields, want %d (error %v)", len(got), len(fields), err)
	}
	for i := range fields {
		if !bytes.Equal(got[i], fields[i]) || got[i] == nil {
			t.Errorf("field %d: got %d bytes (nil %v), want %d", i, len(got[i]), got[i] == nil, len(fields[i]))
		}
	}
	// A field shares its chunk with the next: appending must not reach it.
	_ = append(got[1], 'X')
	if !bytes.Equal(got[2], fields[2]) {
		t.Errorf("appending to a field changed the next one")
	}
}

func TestRefusesBadSizes(t *testing.T) {
	conf := &thrift.TConfiguration{MaxMessageSize: 100}
	for name, data := range map[string][]byte{
		"negative":  binary.BigEndian.AppendUint32(nil, 0xffffff00),
		"too large": binary.BigEndian.AppendUint32(nil, 101),
		"truncated": append(binary.BigEndian.AppendUint32(nil, 10), "short"...),
	} {
		got, err := readAllBinary(NewFactory(conf), data)
		if len(got) != 0 || err == nil {
			t.Errorf("%s: read %d fields, error %v; want none and an error", name, len(got), err)
		}
	}
}

// FuzzSlabProtocol: whatever the bytes, the protocol reads the fields
// the library's binary protocol reads, and fails where it fails.
func FuzzSlabProtocol(f *testing.F) {
	f.Add(encodeFields([]byte("name"), []byte{}, bytes.Repeat([]byte{7}, 1500)))
	f.Add([]byte{0, 0, 0, 5, 'a'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		conf := &thrift.TConfiguration{MaxMessageSize: 1 << 16}
		want, wantErr := readAllBinary(thrift.NewTBinaryProtocolFactoryConf(conf), data)
		got, gotErr := readAllBinary(NewFactory(conf), data)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("library error %v, slab error %v", wantErr, gotErr)
		}
		if len(got) != len(want) {
			t.Fatalf("library read %d fields, slab %d", len(want), len(got))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("field %d: library %x, slab %x", i, want[i], got[i])
			}
		}
	})
}
