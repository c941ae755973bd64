package marshal

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"
)

var benchSink int

// benchCases are typical cell names of the common comparators.
var benchCases = []struct{ typ, a, b string }{
	{"BytesType", "0102030405060708", "0102030405060709"},
	{"UTF8Type", "757365723a3132333435", "757365723a3132333436"},
	{"LongType", "0000000000000001", "ffffffffffffffff"},
	{"TimeUUIDType", "5fe94000f5bc11ea8000000000000000", "5fe94000f5bc11ea0000000000000000"},
	{"IntegerType", "0001", "00ff"},
	{"DecimalType", "000000020096", "0000000115"},
	{"CompositeType(UTF8Type,LongType)", "000161000008000000000000000500", "000161000008000000000000000600"},
	{"CompositeType(TimeUUIDType,UTF8Type)", "00105fe94000f5bc11ea80000000000000010000017800", "00105fe94000f5bc11ea8000000000000001000002787900"},
	{"DynamicCompositeType(s=>UTF8Type,l=>LongType)", "807300016100806c0008000000000000000500", "807300016100806c0008000000000000000600"},
}

// BenchmarkCompare reports, besides ns/op, x_bytes.Compare: the time over
// that of bytes.Compare on the same two values, measured in the same run
// (the ceiling: a comparator cannot beat a plain memcmp).
func BenchmarkCompare(b *testing.B) {
	for _, tc := range benchCases {
		typ := mustParse(b, tc.typ)
		x, _ := hex.DecodeString(tc.a)
		y, _ := hex.DecodeString(tc.b)
		ceiling := nsPerOp(func() { benchSink += bytes.Compare(x, y) })
		b.Run(tc.typ, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchSink += typ.Compare(x, y)
			}
			reportRatio(b, ceiling, "x_bytes.Compare")
		})
	}
}

// BenchmarkAppendKey reports x_copy: the time over that of appending the
// value's bytes unchanged to the same buffer (the ceiling of any encoder).
func BenchmarkAppendKey(b *testing.B) {
	for _, tc := range benchCases {
		typ := mustParse(b, tc.typ)
		x, _ := hex.DecodeString(tc.a)
		buf := make([]byte, 0, 256)
		ceiling := nsPerOp(func() { buf = append(buf[:0], x...) })
		b.Run(tc.typ, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = typ.AppendKey(buf[:0], x)
			}
			benchSink += len(buf)
			reportRatio(b, ceiling, "x_copy")
		})
	}
}

// nsPerOp times f by hand (testing.Benchmark cannot run inside a
// benchmark), doubling the iterations until 20ms have passed.
func nsPerOp(f func()) float64 {
	for n := 1024; ; n *= 2 {
		start := time.Now()
		for range n {
			f()
		}
		if elapsed := time.Since(start); elapsed > 20*time.Millisecond {
			return float64(elapsed.Nanoseconds()) / float64(n)
		}
	}
}

func reportRatio(b *testing.B, ceiling float64, unit string) {
	if b.N > 0 && ceiling > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/ceiling, unit)
	}
}
