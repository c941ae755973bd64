package partition

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"testing"
	"time"
)

var benchSink int64

// BenchmarkMurmur3Token measures the token of a key on every request.
// Each result also reports x_maphash: its time over that of the runtime's
// maphash on the same key, measured in the same run (the ceiling: the
// fastest 64-bit hash the machine offers to Go code).
func BenchmarkMurmur3Token(b *testing.B) {
	p := Murmur3Partitioner{}
	for _, size := range []int{16, 64, 1024} {
		key := make([]byte, size)
		r := rand.New(rand.NewPCG(uint64(size), 7))
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		ceiling := maphashNsPerOp(key)
		b.Run(fmt.Sprintf("LongToken/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				benchSink += p.LongToken(key)
			}
			reportRatio(b, ceiling)
		})
		b.Run(fmt.Sprintf("Token/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				benchSink += int64(len(p.Token(key)))
			}
			reportRatio(b, ceiling)
		})
		b.Run(fmt.Sprintf("AppendRowKey/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			buf := make([]byte, 0, 2*size+16)
			for b.Loop() {
				buf = p.AppendRowKey(buf[:0], key)
			}
			benchSink += int64(len(buf))
			reportRatio(b, ceiling)
		})
	}
}

// BenchmarkAppendRowKey covers the other partitioners on a 64-byte key.
func BenchmarkAppendRowKey(b *testing.B) {
	key := []byte("user:0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
	for _, p := range allPartitioners {
		b.Run(p.Name()[len(classPrefix):], func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 512)
			for b.Loop() {
				buf = p.AppendRowKey(buf[:0], key)
			}
			benchSink += int64(len(buf))
		})
	}
}

// maphashNsPerOp times maphash on key by hand (testing.Benchmark cannot
// run inside a benchmark), doubling the iterations until 20ms have passed.
func maphashNsPerOp(key []byte) float64 {
	seed := maphash.MakeSeed()
	for n := 1024; ; n *= 2 {
		start := time.Now()
		for range n {
			benchSink += int64(maphash.Bytes(seed, key))
		}
		if elapsed := time.Since(start); elapsed > 20*time.Millisecond {
			return float64(elapsed.Nanoseconds()) / float64(n)
		}
	}
}

func reportRatio(b *testing.B, ceilingNs float64) {
	if ceilingNs > 0 && b.N > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/ceilingNs, "x_maphash")
	}
}
