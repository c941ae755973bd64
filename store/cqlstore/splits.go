package cqlstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/thriftbridge/thriftbridge/store"
)

var _ store.SplitSource = (*Engine)(nil)

// maxSplits bounds how many splits one call returns, whatever the rows
// per split asked: a split then holds more rows than asked.
const maxSplits = 1 << 16

// ringSize is the number of Murmur3 tokens.
const ringSize float64 = 1 << 64

// Splits implements store.SplitSource from the cluster's size estimates
// (system.size_estimates: each node's estimate of the partitions of its
// primary ranges, refreshed every few minutes from its SSTables). Each
// node is asked for its own estimates; rows are assumed spread evenly
// over the tokens of an estimated range, as Murmur3 spreads them. A
// table no node has estimates for yet (data only in memtables) is one
// split of 0 rows, as Cassandra 3.11 cuts a range it has no sample of.
func (e *Engine) Splits(ctx context.Context, t *store.Table, start, end string, rowsPerSplit int) ([]store.Split, error) {
	s, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("cqlstore: splits: start token %q: %w", start, err)
	}
	if _, err := strconv.ParseInt(end, 10, 64); err != nil {
		return nil, fmt.Errorf("cqlstore: splits: end token %q: %w", end, err)
	}
	estimates, err := e.sizeEstimates(ctx, e.opts.KeyspacePrefix+t.Def.Keyspace, t.Def.Name)
	if err != nil {
		return nil, err
	}
	length := offset(s, mustToken(end))
	if length == 0 {
		length = math.MaxUint64 // the whole ring from start
	}
	cuts := cutRange(s, length, estimates, rowsPerSplit)
	cuts[len(cuts)-1].End = end
	return cuts, nil
}

// rangeEstimate is a node's estimate of the partitions in (start, end].
type rangeEstimate struct {
	start, end int64
	partitions int64
}

// sizeEstimates reads every node's estimates of a table.
func (e *Engine) sizeEstimates(ctx context.Context, keyspace, table string) ([]rangeEstimate, error) {
	var out []rangeEstimate
	for _, h := range e.session.GetHosts() {
		if !h.IsUp() {
			continue
		}
		iter := e.session.Query(`SELECT range_start, range_end, partitions_count FROM system.size_estimates WHERE keyspace_name = ? AND table_name = ?`,
			keyspace, table).SetHostID(h.HostID()).IterContext(ctx)
		var rs, re string
		var n int64
		for iter.Scan(&rs, &re, &n) {
			a, err1 := strconv.ParseInt(rs, 10, 64)
			b, err2 := strconv.ParseInt(re, 10, 64)
			if err1 != nil || err2 != nil || n <= 0 {
				continue
			}
			out = append(out, rangeEstimate{start: a, end: b, partitions: n})
		}
		if err := iter.Close(); err != nil {
			return nil, wrapErr("read the size estimates of "+keyspace+"."+table+" on "+h.ConnectAddress().String(), err)
		}
	}
	return out, nil
}

// offset is the distance from token a to token b going up the ring (0
// when they are equal).
func offset(a, b int64) uint64 { return uint64(b) - uint64(a) }

func mustToken(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

// piece is a stretch (lo, hi] of offsets from the range's start and the
// estimated rows in it.
type piece struct {
	lo, hi uint64
	rows   float64
}

// cutRange cuts the length tokens after start into splits of about
// rowsPerSplit estimated rows.
func cutRange(start int64, length uint64, estimates []rangeEstimate, rowsPerSplit int) []store.Split {
	var pieces []piece
	var total float64
	for _, est := range estimates {
		size := float64(offset(est.start, est.end))
		if size == 0 {
			size = ringSize
		}
		density := float64(est.partitions) / size
		lo := offset(start, est.start)
		hi := lo + offset(est.start, est.end) // may wrap past the range's start
		add := func(lo, hi uint64) {
			hi = min(hi, length)
			if hi > lo {
				p := piece{lo: lo, hi: hi, rows: density * float64(hi-lo)}
				pieces = append(pieces, p)
				total += p.rows
			}
		}
		if est.start == est.end || hi <= lo {
			// The estimate wraps past the range's start: (lo, 2^64) and
			// [0, hi].
			add(lo, math.MaxUint64)
			add(0, hi)
		} else {
			add(lo, hi)
		}
	}
	slices.SortFunc(pieces, func(a, b piece) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	target := max(float64(rowsPerSplit), total/maxSplits, 1)
	token := func(off uint64) string { return strconv.FormatInt(int64(uint64(start)+off), 10) }
	var splits []store.Split
	var left uint64
	var acc float64
	for _, p := range pieces {
		lo := p.lo
		density := p.rows / float64(p.hi-p.lo)
		for acc+density*float64(p.hi-lo) >= target {
			cut := lo + uint64(math.Ceil((target-acc)/density))
			if cut <= left || cut > p.hi {
				cut = p.hi
			}
			splits = append(splits, store.Split{Start: token(left), End: token(cut), Rows: int64(math.Round(acc + density*float64(cut-lo)))})
			left, lo, acc = cut, cut, 0
			if cut == p.hi {
				break
			}
		}
		acc += density * float64(p.hi-lo)
	}
	switch {
	case len(splits) > 0 && acc < target/2:
		// A remainder of less than half a split joins the last one.
		last := &splits[len(splits)-1]
		last.End = token(length)
		last.Rows += int64(math.Round(acc))
	case left < length || len(splits) == 0:
		splits = append(splits, store.Split{Start: token(left), End: token(length), Rows: int64(math.Round(acc))})
	}
	return splits
}
