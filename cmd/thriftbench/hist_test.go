package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketLayout(t *testing.T) {
	// Buckets are contiguous and ordered, and a value lies within the
	// bounds of its bucket with a relative error under 1%.
	prevHigh := int64(-1)
	for i := range bucketOf(1 << 40) {
		high := bucketHigh(i)
		if high <= prevHigh {
			t.Fatalf("bucket %d: high %d not above the previous %d", i, high, prevHigh)
		}
		if got := bucketOf(prevHigh + 1); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", prevHigh+1, got, i)
		}
		if got := bucketOf(high); got != i {
			t.Fatalf("bucketOf(%d) = %d, want %d", high, got, i)
		}
		low := prevHigh + 1
		if low > 0 && float64(high-low)/float64(low) > 0.01 {
			t.Fatalf("bucket %d [%d, %d] is wider than 1%%", i, low, high)
		}
		prevHigh = high
	}
	if b := bucketOf(1<<63 - 1); b >= histBucket {
		t.Fatalf("the largest duration falls outside the histogram: bucket %d of %d", b, histBucket)
	}
}

func TestQuantiles(t *testing.T) {
	var h histogram
	if h.quantile(0.5) != 0 {
		t.Fatal("an empty histogram has a non-zero median")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var all []int64
	parts := []*histogram{new(histogram), new(histogram), new(histogram)}
	for i := range 100000 {
		// A long-tailed mix: most calls near 1ms, a few near 50ms.
		v := int64(500_000 + rng.IntN(1_000_000))
		if i%100 == 0 {
			v = int64(20_000_000 + rng.IntN(60_000_000))
		}
		all = append(all, v)
		parts[i%3].record(time.Duration(v))
	}
	for _, p := range parts {
		h.merge(p)
	}
	slices.Sort(all)
	if h.total != uint64(len(all)) || h.max != all[len(all)-1] {
		t.Fatalf("merged total %d max %d, want %d and %d", h.total, h.max, len(all), all[len(all)-1])
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		rank := max(int(float64(len(all))*q+0.999999), 1)
		want := all[rank-1]
		got := int64(h.quantile(q))
		if got < want || float64(got-want) > 0.01*float64(want) {
			t.Errorf("quantile(%g) = %d, want %d within +1%%", q, got, want)
		}
	}
}

func TestQuantileSmall(t *testing.T) {
	var h histogram
	for _, v := range []time.Duration{3, 1, 2, 4} {
		h.record(v)
	}
	for q, want := range map[float64]time.Duration{0.25: 1, 0.5: 2, 0.75: 3, 1: 4} {
		if got := h.quantile(q); got != want {
			t.Errorf("quantile(%g) = %d, want %d", q, got, want)
		}
	}
	h.record(-5) // a clock step back counts as 0
	if got := h.quantile(0); got != 0 {
		t.Errorf("quantile(0) = %d after a negative duration, want 0", got)
	}
}
