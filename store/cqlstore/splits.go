package cqlstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

var _ store.SplitSource = (*Engine)(nil)

// maxSplits bounds how many splits one call returns, whatever the rows
// per split asked: a split then holds more rows than asked.
const maxSplits = 1 << 16

// ringSize is the number of ring positions (ringPosition).
const ringSize float64 = 1 << 64

// Splits implements store.SplitSource from the cluster's size estimates
// (system.size_estimates: each node's estimate of the partitions of its
// primary ranges, refreshed every few minutes from its SSTables). Each
// node is asked for its own estimates; rows are assumed spread evenly
// over the ring positions of an estimated range (ringPosition), as
// Murmur3Partitioner and RandomPartitioner spread them and as keys under
// ByteOrderedPartitioner seldom are. A table no node has estimates for
// yet (data only in memtables) is one split of 0 rows, as Cassandra 3.11
// cuts a range it has no sample of.
func (e *Engine) Splits(ctx context.Context, t *store.Table, start, end string, rowsPerSplit int) ([]store.Split, error) {
	for _, tok := range []string{start, end} {
		if _, err := e.part.ParseToken(tok); err != nil {
			return nil, fmt.Errorf("cqlstore: splits: %w", err)
		}
	}
	estimates, err := e.sizeEstimates(ctx, e.opts.KeyspacePrefix+t.Def.Keyspace, t.Def.Name)
	if err != nil {
		return nil, err
	}
	return e.cutTokens(start, end, estimates, rowsPerSplit), nil
}

// cutTokens cuts the range (start, end] of valid tokens (the whole ring
// when they are equal) into splits of about rowsPerSplit rows of the
// estimates; the first split starts at start and the last ends at end,
// exactly as the caller wrote them.
func (e *Engine) cutTokens(start, end string, estimates []rangeEstimate, rowsPerSplit int) []store.Split {
	startTok, _ := e.part.ParseToken(start)
	endTok, _ := e.part.ParseToken(end)
	from := e.ringPosition(startTok)
	length := offset(from, e.ringPosition(endTok))
	if length == 0 {
		if bytes.Compare(startTok, endTok) < 0 {
			length = 1 // two tokens of one position: no cut between them
		} else {
			length = math.MaxUint64 // the whole ring from start
		}
	}
	cuts := cutRange(from, length, estimates, rowsPerSplit, func(off uint64) string {
		return e.part.FormatToken(e.tokenAt(from + off))
	})
	cuts[0].Start = start
	cuts[len(cuts)-1].End = end
	return cuts
}

// rangeEstimate is a node's estimate of the partitions in (start, end],
// ring positions.
type rangeEstimate struct {
	start, end uint64
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
			a, err1 := e.part.ParseToken(rs)
			b, err2 := e.part.ParseToken(re)
			if err1 != nil || err2 != nil || n <= 0 {
				continue
			}
			out = append(out, rangeEstimate{start: e.ringPosition(a), end: e.ringPosition(b), partitions: n})
		}
		if err := iter.Close(); err != nil {
			return nil, wrapErr("read the size estimates of "+keyspace+"."+table+" on "+h.ConnectAddress().String(), err)
		}
	}
	return out, nil
}

// ringPosition maps a token onto 2**64 positions of the ring, in token
// order, where estimates are cut: a Murmur3 token is its own position
// (the minimum 0), a RandomPartitioner token its top 64 of 128 bits (2**127
// wraps to 0, next to the minimum), a ByteOrderedPartitioner token its
// first 8 bytes. Positions are exact for Murmur3; otherwise tokens of one
// position are not told apart, and tokenAt(p) is the smallest token of
// position p, so tokenAt(p+1) sorts after every token of position p.
func (e *Engine) ringPosition(t partition.Token) uint64 {
	switch e.part.(type) {
	case partition.RandomPartitioner:
		if len(t) != 16 {
			return 0
		}
		return binary.BigEndian.Uint64(t[:8])<<1 | binary.BigEndian.Uint64(t[8:])>>63
	default: // Murmur3Partitioner (8 bytes, the value with its sign bit flipped), ByteOrderedPartitioner
		var b [8]byte
		copy(b[:], t)
		return binary.BigEndian.Uint64(b[:])
	}
}

// tokenAt is the smallest token of a ring position (ringPosition).
func (e *Engine) tokenAt(pos uint64) partition.Token {
	switch e.part.(type) {
	case partition.RandomPartitioner:
		t := binary.BigEndian.AppendUint64(make(partition.Token, 0, 16), pos>>1)
		return binary.BigEndian.AppendUint64(t, pos<<63)
	case partition.ByteOrderedPartitioner:
		// Without trailing zero bytes: a key that ends there sorts
		// before the same key with zeros after it.
		t := binary.BigEndian.AppendUint64(make(partition.Token, 0, 8), pos)
		return bytes.TrimRight(t, "\x00")
	}
	if pos == 0 {
		return partition.Token{} // Murmur3's minimum
	}
	return binary.BigEndian.AppendUint64(make(partition.Token, 0, 8), pos)
}

// offset is the distance from token a to token b going up the ring (0
// when they are equal).
func offset(a, b uint64) uint64 { return b - a }

// piece is a stretch (lo, hi] of offsets from the range's start and the
// estimated rows in it.
type piece struct {
	lo, hi uint64
	rows   float64
}

// cutRange cuts the length ring positions after start into splits of
// about rowsPerSplit estimated rows; token names the position off after
// start.
func cutRange(start, length uint64, estimates []rangeEstimate, rowsPerSplit int, token func(off uint64) string) []store.Split {
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
