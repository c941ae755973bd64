package main

import (
	"math"
	"math/bits"
	"time"
)

// A latency histogram with bounded memory and a relative error under 1%:
// values below 2^(subBits+1) ns have a bucket each, and every further
// power of two is cut into 2^subBits buckets (HdrHistogram's layout).
// A connection records into its own histogram; they are merged at the end.
const (
	subBits    = 7
	subCount   = 1 << subBits
	histBucket = (64-subBits)*subCount + subCount
)

type histogram struct {
	counts [histBucket]uint64
	total  uint64
	max    int64
}

// bucketOf returns the bucket of a duration in nanoseconds (v >= 0).
func bucketOf(v int64) int {
	shift := max(bits.Len64(uint64(v))-(subBits+1), 0)
	return shift*subCount + int(uint64(v)>>shift)
}

// bucketHigh returns the largest value that falls into bucket i.
func bucketHigh(i int) int64 {
	if i < 2*subCount {
		return int64(i)
	}
	shift := i/subCount - 1
	mant := i - shift*subCount
	return int64(mant+1)<<shift - 1
}

func (h *histogram) record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucketOf(v)]++
	h.total++
	h.max = max(h.max, v)
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// quantile returns the latency below or at which a fraction q of the
// recorded calls completed: the upper bound of the bucket holding the
// ceil(q*total)-th value, never above the largest value recorded. It is
// 0 for an empty histogram.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := max(uint64(math.Ceil(q*float64(h.total))), 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketHigh(i), h.max))
		}
	}
	return time.Duration(h.max)
}
