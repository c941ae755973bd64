package cqlstore

import (
	"math"
	"strconv"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// TestCutRange cuts token ranges from size estimates: consecutive splits
// from the range's start, about the rows asked each, the estimated rows
// all counted once.
func TestCutRange(t *testing.T) {
	const minToken, maxToken = math.MinInt64, math.MaxInt64
	for _, c := range []struct {
		name         string
		start, end   int64
		estimates    []murmur3Estimate
		rowsPerSplit int
		splits       int   // how many splits
		rows         int64 // rows in all
		slack        int64 // how far a split (the last aside) may be from rowsPerSplit
	}{
		{"the whole ring, one estimate", 0, 0, []murmur3Estimate{{0, 0, 1000}}, 100, 10, 1000, 1},
		{"two vnodes of different densities", minToken, minToken,
			[]murmur3Estimate{{minToken, 0, 100}, {0, maxToken, 900}}, 100, 10, 1000, 1},
		{"an estimate wrapping past the range's start", 0, 0, []murmur3Estimate{{4e18, -4e18, 500}}, 100, 5, 500, 1},
		{"part of an estimated range", -1e18, 1e18, []murmur3Estimate{{minToken, maxToken, 2000}}, 100, 2, 217, 1},
		{"no estimate", 10, 20, nil, 100, 1, 0, 0},
		{"more splits than the cap", 0, 0, []murmur3Estimate{{0, 0, 1e9}}, 1, maxSplits, 1e9, 15259},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Murmur3 tokens: a token's ring position is its value with
			// the sign bit flipped.
			pos := func(v int64) uint64 { return uint64(v) ^ 1<<63 }
			token := func(off uint64) string { return strconv.FormatInt(int64((pos(c.start)+off)^1<<63), 10) }
			var estimates []rangeEstimate
			for _, est := range c.estimates {
				estimates = append(estimates, rangeEstimate{pos(est.start), pos(est.end), est.partitions})
			}
			length := offset(pos(c.start), pos(c.end))
			if length == 0 {
				length = math.MaxUint64
			}
			splits := cutRange(pos(c.start), length, estimates, c.rowsPerSplit, token)
			if len(splits) != c.splits {
				t.Errorf("%d splits, want %d: %v", len(splits), c.splits, head(splits))
			}
			var rows int64
			prev := strconv.FormatInt(c.start, 10)
			for i, s := range splits {
				if s.Start != prev {
					t.Errorf("split %d starts at %s, want %s (the previous end)", i, s.Start, prev)
				}
				prev = s.End
				rows += s.Rows
				if i < len(splits)-1 && abs(s.Rows-int64(max(c.rowsPerSplit, int(c.rows/maxSplits)))) > c.slack {
					t.Errorf("split %d has %d rows, want about %d", i, s.Rows, c.rowsPerSplit)
				}
			}
			if abs(rows-c.rows) > int64(len(splits)) {
				t.Errorf("%d rows in all, want %d", rows, c.rows)
			}
			wantEnd := strconv.FormatInt(int64(uint64(c.start)+length), 10)
			if prev != wantEnd {
				t.Errorf("the last split ends at %s, want %s", prev, wantEnd)
			}
		})
	}
}

// murmur3Estimate is a rangeEstimate in Murmur3 tokens.
type murmur3Estimate struct {
	start, end int64
	partitions int64
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func head(s []store.Split) []store.Split {
	return s[:min(len(s), 5)]
}
