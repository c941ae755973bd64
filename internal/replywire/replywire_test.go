package replywire

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// generated is what the generated writer of s writes with the library's
// binary protocol.
func generated(t testing.TB, s thrift.TStruct) []byte {
	t.Helper()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})
	if err := s.Write(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// randomStructs makes structures of every shape the package writes:
// optional fields set or not, empty and nil names, nil elements.
// With whole set, every element of a list is there and every struct can
// be read back.
type randomStructs struct {
	r     *rand.Rand
	whole bool
}

// absent reports whether an element is left out (nil).
func (g randomStructs) absent() bool { return !g.whole && g.r.IntN(20) == 0 }

func (g randomStructs) bytes() []byte {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return []byte{}
	default:
		b := make([]byte, g.r.IntN(80))
		for i := range b {
			b[i] = byte(g.r.Uint32())
		}
		return b
	}
}

func (g randomStructs) column() *cassandra.Column {
	if g.absent() {
		return nil
	}
	c := &cassandra.Column{Name: g.bytes()}
	if g.r.IntN(4) > 0 {
		c.Value = g.bytes()
	}
	if g.r.IntN(4) > 0 {
		ts := int64(g.r.Uint64())
		c.Timestamp = &ts
	}
	if g.r.IntN(3) == 0 {
		ttl := int32(g.r.Uint32())
		c.TTL = &ttl
	}
	return c
}

func (g randomStructs) counterColumn() *cassandra.CounterColumn {
	if g.absent() {
		return nil
	}
	return &cassandra.CounterColumn{Name: g.bytes(), Value: int64(g.r.Uint64())}
}

func (g randomStructs) cosc() *cassandra.ColumnOrSuperColumn {
	if g.absent() {
		return nil
	}
	c := &cassandra.ColumnOrSuperColumn{}
	// Mostly one field set, as replies have it; sometimes none or several.
	for range 1 + g.r.IntN(2)*g.r.IntN(3) {
		switch g.r.IntN(4) {
		case 0:
			c.Column = g.column()
		case 1:
			s := &cassandra.SuperColumn{Name: g.bytes()}
			for range g.r.IntN(4) {
				s.Columns = append(s.Columns, g.column())
			}
			c.SuperColumn = s
		case 2:
			c.CounterColumn = g.counterColumn()
		case 3:
			s := &cassandra.CounterSuperColumn{Name: g.bytes()}
			for range g.r.IntN(4) {
				s.Columns = append(s.Columns, g.counterColumn())
			}
			c.CounterSuperColumn = s
		}
	}
	return c
}

func (g randomStructs) columns() []*cassandra.ColumnOrSuperColumn {
	if g.r.IntN(10) == 0 {
		return nil
	}
	cs := make([]*cassandra.ColumnOrSuperColumn, g.r.IntN(6))
	for i := range cs {
		cs[i] = g.cosc()
	}
	return cs
}

func (g randomStructs) keySlices() []*cassandra.KeySlice {
	ks := make([]*cassandra.KeySlice, g.r.IntN(5))
	for i := range ks {
		if !g.absent() {
			ks[i] = &cassandra.KeySlice{Key: g.bytes(), Columns: g.columns()}
		}
	}
	return ks
}

// checkReplies compares every function of the package with the generated
// writers on the structures of one seed, through the results of the reads
// whose replies they write.
func checkReplies(t *testing.T, seed uint64) {
	g := randomStructs{r: rand.New(rand.NewPCG(seed, seed>>32))}
	success := func(typ thrift.TType, value []byte) []byte {
		return append(append(Field(nil, typ, 0), value...), thrift.STOP)
	}
	cs := g.columns()
	if cs == nil {
		cs = []*cassandra.ColumnOrSuperColumn{}
	}
	if want, got := generated(t, &cassandra.CassandraGetSliceResult{Success: cs}), success(thrift.LIST, Columns(nil, cs)); !bytes.Equal(want, got) {
		t.Fatalf("seed %d: get_slice reply\ngenerated %x\nappended  %x", seed, want, got)
	}
	ks := g.keySlices()
	if want, got := generated(t, &cassandra.CassandraGetRangeSlicesResult{Success: ks}), success(thrift.LIST, KeySlices(nil, ks)); !bytes.Equal(want, got) {
		t.Fatalf("seed %d: get_range_slices reply\ngenerated %x\nappended  %x", seed, want, got)
	}
	// A map of one entry is written the same whatever Go's map order.
	m := map[string][]*cassandra.ColumnOrSuperColumn{string(g.bytes()): g.columns()}
	if want, got := generated(t, &cassandra.CassandraMultigetSliceResult{Success: m}), success(thrift.MAP, ColumnsByKey(nil, m)); !bytes.Equal(want, got) {
		t.Fatalf("seed %d: multiget_slice reply\ngenerated %x\nappended  %x", seed, want, got)
	}
}

func TestRepliesAsGenerated(t *testing.T) {
	for seed := range uint64(3000) {
		checkReplies(t, seed)
	}
}

func TestManyKeysByKey(t *testing.T) {
	// Entries of a larger map are each written whole, in some order.
	g := randomStructs{r: rand.New(rand.NewPCG(7, 7)), whole: true}
	m := map[string][]*cassandra.ColumnOrSuperColumn{}
	for i := range 20 {
		m[fmt.Sprint(i)] = g.columns()
	}
	got := ColumnsByKey(nil, m)
	want := generated(t, &cassandra.CassandraMultigetSliceResult{Success: m})
	// Both are the same length and decode to the same map.
	if len(want) != len(got)+4 { // the generated result has a field header and a stop
		t.Fatalf("lengths: generated %d, appended %d (+4)", len(want), len(got))
	}
	var back cassandra.CassandraMultigetSliceResult
	buf := thrift.NewTMemoryBuffer()
	_, _ = buf.Write(append(append(Field(nil, thrift.MAP, 0), got...), thrift.STOP))
	if err := back.Read(context.Background(), thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})); err != nil {
		t.Fatal(err)
	}
	if len(back.Success) != len(m) {
		t.Fatalf("read back %d keys of %d", len(back.Success), len(m))
	}
	for k, cs := range m {
		if !bytes.Equal(Columns(nil, back.Success[k]), Columns(nil, cs)) {
			t.Fatalf("key %q does not read back as written", k)
		}
	}
}

func FuzzRepliesAsGenerated(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(1 << 40))
	f.Fuzz(checkReplies)
}

// BenchmarkRangeReply writes a get_range_slices reply of 10 rows of 20
// columns of 64 bytes (cmd/thriftbench's range mode) three ways: appended
// by KeySlices, by the generated writer through slabprotocol's
// AppendProtocol, and by the generated writer through the library's
// binary protocol.
func BenchmarkRangeReply(b *testing.B) {
	ctx := context.Background()
	ts := int64(1700000000000000)
	var rows []*cassandra.KeySlice
	for r := range 10 {
		row := &cassandra.KeySlice{Key: fmt.Appendf(nil, "p%09d", r)}
		for c := range 20 {
			row.Columns = append(row.Columns, &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{
				Name: fmt.Appendf(nil, "c%05d", c), Value: make([]byte, 64), Timestamp: &ts}})
		}
		rows = append(rows, row)
	}
	b.Run("appended", func(b *testing.B) {
		var out []byte
		for b.Loop() {
			out = KeySlices(out[:0], rows)
		}
		b.SetBytes(int64(len(out)))
	})
	result := &cassandra.CassandraGetRangeSlicesResult{Success: rows}
	frames := &slabprotocol.FramedTransport{OutFrame: slabprotocol.NewOutFrame()}
	library := thrift.NewTBinaryProtocolConf(frames, &thrift.TConfiguration{})
	for name, p := range map[string]thrift.TProtocol{"generated-library": library, "generated-append": slabprotocol.NewAppendProtocol(library, &frames.OutFrame)} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				frames.Out = frames.Out[:4] // the frame's length
				if err := result.Write(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(frames.Out) - 4))
		})
	}
}
