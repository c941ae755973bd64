package cqlstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// everyPartitioner is every cluster the environment names: the Murmur3
// ones and those of other partitioners.
func everyPartitioner(t *testing.T) []testcluster.Cluster {
	cs := testcluster.FromEnv()
	for _, name := range []string{"ByteOrderedPartitioner", "RandomPartitioner"} {
		if c, ok := testcluster.OtherPartitioners()[name]; ok {
			cs = append(cs, c)
		} else {
			t.Logf("!!! SKIPPED: no %s cluster (CASSANDRA_HOSTS_BOP / CASSANDRA_HOSTS_RP; test/cassandra/cassandra.sh start bop rp) !!!", name)
		}
	}
	if len(cs) == 0 {
		t.Skip("!!! SKIPPED: tokens against real clusters need CASSANDRA_* hosts (test/cassandra/cassandra.sh start) !!!")
	}
	return cs
}

// TestTokensAreTheClusters holds the engine's tokens to the cluster's
// own on every partitioner: CQL's token() of each key is what
// partition.CQLToken gives for the engine's token of the key, and reads
// back to it; the ring's tokens are the nodes' own, in the partitioner's
// Thrift form.
func TestTokensAreTheClusters(t *testing.T) {
	for _, c := range everyPartitioner(t) {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prefix := testcluster.Keyspace("tb_tok") + "_"
			e := openOwn(ctx, t, c.Hosts, prefix)
			ks := prefix + "t"
			for _, stmt := range []string{
				"CREATE KEYSPACE " + ks + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
				"CREATE TABLE " + ks + ".t (key blob PRIMARY KEY, v int)",
			} {
				if err := e.ddl(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			keys := [][]byte{{0}, {0xff}, {0x80}, []byte("a"), bytes.Repeat([]byte{0xff}, 300)}
			for i := range 200 {
				// Random keys of 2 to 41 bytes, the first byte their own.
				k := make([]byte, 2+i%40)
				rand.Read(k)
				k[0] = byte(i)
				keys = append(keys, k)
			}
			for _, k := range keys {
				if err := e.session.Query("INSERT INTO "+ks+".t (key, v) VALUES (?, 1)", k).ExecContext(ctx); err != nil {
					t.Fatal(err)
				}
			}
			iter := e.session.Query("SELECT key, token(key) FROM " + ks + ".t").PageSize(50).IterContext(ctx)
			var key []byte
			var tok rawDest
			var seen int
			var prev partition.Token
			for iter.Scan(&key, &tok) {
				seen++
				want := e.part.Token(key)
				c, err := partition.CQLToken(e.part, want)
				if err != nil || !bytes.Equal(c, tok.b) {
					t.Errorf("key %x: token() is %x, the engine's %x (%v)", key, tok.b, c, err)
				}
				got, err := partition.ParseCQLToken(e.part, tok.b)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("key %x: token() %x reads %x (%v), want %x", key, tok.b, got, err, want)
				}
				if bytes.Compare(got, prev) < 0 {
					t.Errorf("key %x: the cluster lists token %x after %x", key, got, prev)
				}
				prev = got
			}
			if err := iter.Close(); err != nil {
				t.Fatal(err)
			}
			if seen != len(keys) {
				t.Fatalf("%d rows read, %d written", seen, len(keys))
			}

			ring, err := e.Ring(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var nodeTokens []string
			if err := e.session.Query("SELECT tokens FROM system.local").ScanContext(ctx, &nodeTokens); err != nil {
				t.Fatal(err)
			}
			var ends []string
			for _, r := range ring.Ranges {
				for _, s := range []string{r.Start, r.End} {
					if _, err := e.part.ParseToken(s); err != nil {
						t.Errorf("ring range %s..%s: %v", r.Start, r.End, err)
					}
				}
				ends = append(ends, r.End)
			}
			slices.Sort(ends)
			slices.Sort(nodeTokens)
			if fmt.Sprint(ends) != fmt.Sprint(nodeTokens) {
				t.Errorf("ring ends at %v, the node's tokens are %v", ends, nodeTokens)
			}
		})
	}
}

// TestRingPositions: a token's ring position orders tokens as the
// partitioner does, and tokenAt(p) is the smallest token of position p:
// tokenAt(p) <= t < tokenAt(p+1).
func TestRingPositions(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	for _, p := range []partition.Partitioner{partition.Murmur3Partitioner{}, partition.RandomPartitioner{}, partition.ByteOrderedPartitioner{}} {
		e := &Engine{part: p}
		var toks []partition.Token
		for range 2000 {
			k := make([]byte, 1+r.IntN(12))
			for i := range k {
				k[i] = byte(r.IntN(256))
			}
			toks = append(toks, p.Token(k))
		}
		slices.SortFunc(toks, func(a, b partition.Token) int { return bytes.Compare(a, b) })
		for i, tok := range toks {
			pos := e.ringPosition(tok)
			if i > 0 && pos < e.ringPosition(toks[i-1]) {
				t.Fatalf("%s: token %x at position %d, before %x's %d", p.Name(), tok, pos, toks[i-1], e.ringPosition(toks[i-1]))
			}
			if lo := e.tokenAt(pos); bytes.Compare(lo, tok) > 0 {
				t.Fatalf("%s: tokenAt(%d) = %x sorts after %x", p.Name(), pos, lo, tok)
			}
			if pos < math.MaxUint64 {
				if hi := e.tokenAt(pos + 1); bytes.Compare(hi, tok) <= 0 {
					t.Fatalf("%s: tokenAt(%d) = %x does not sort after %x", p.Name(), pos+1, hi, tok)
				}
			}
			if e.ringPosition(e.tokenAt(pos)) != pos {
				t.Fatalf("%s: tokenAt(%d) is at position %d", p.Name(), pos, e.ringPosition(e.tokenAt(pos)))
			}
		}
	}
}

// TestSplitsOfEveryPartitioner cuts ranges of each partitioner from a
// made-up estimate: the splits keep the caller's start and end exactly,
// follow one another, and their cuts are tokens inside the range, in
// order.
func TestSplitsOfEveryPartitioner(t *testing.T) {
	for _, c := range []struct {
		p          partition.Partitioner
		start, end string
	}{
		{partition.Murmur3Partitioner{}, "-9223372036854775808", "-9223372036854775808"},
		{partition.Murmur3Partitioner{}, "-100", "4611686018427387904"},
		{partition.RandomPartitioner{}, "-1", "-1"},
		{partition.RandomPartitioner{}, "12345678901234567890123", "85070591730234615865843651857942052864"},
		{partition.ByteOrderedPartitioner{}, "", ""},
		{partition.ByteOrderedPartitioner{}, "61", "7a7a7a"},
		{partition.ByteOrderedPartitioner{}, "6161616161616161ff", "6161616161616161ff01"},
	} {
		e := &Engine{part: c.p}
		// The whole ring holds 1e6 rows evenly, one estimate from the
		// minimum around to it.
		splits := e.cutTokens(c.start, c.end, []rangeEstimate{{0, 0, 1_000_000}}, 10_000)
		from, _ := c.p.ParseToken(c.start)
		to, _ := c.p.ParseToken(c.end)
		name := fmt.Sprintf("%s %s..%s", c.p.Name(), c.start, c.end)
		prev := c.start
		for i, s := range splits {
			if s.Start != prev {
				t.Errorf("%s: split %d starts at %s, want %s", name, i, s.Start, prev)
			}
			if i > 0 {
				a, _ := c.p.ParseToken(splits[i-1].Start)
				b, err := c.p.ParseToken(s.Start)
				if err != nil {
					t.Fatalf("%s: cut %q: %v", name, s.Start, err)
				}
				// A range that does not wrap: every cut is inside it.
				if bytes.Compare(from, to) < 0 && (bytes.Compare(b, from) <= 0 || bytes.Compare(b, to) >= 0 || (i > 1 && bytes.Compare(a, b) >= 0)) {
					t.Errorf("%s: cut %d at %s is not inside the range after %s", name, i, s.Start, splits[i-1].Start)
				}
			}
			prev = s.End
		}
		if prev != c.end {
			t.Errorf("%s: the last split ends at %s", name, prev)
		}
		t.Logf("%s: %d splits", name, len(splits))
	}
}
