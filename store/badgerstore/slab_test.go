package badgerstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// fillSlab hands out slices of the sizes a group of super batches asks
// for (keys, records, packs), writes a distinct pattern into each and
// returns them.
func fillSlab(s *slab, round int) [][]byte {
	var out [][]byte
	for i := 0; i < 3000; i++ {
		n := 16 + (i*37)%1200
		b := s.scratch(n)
		for j := 0; j < n; j++ {
			b = append(b, byte(i+j+round))
		}
		out = append(out, b)
	}
	return out
}

func checkSlab(t *testing.T, got [][]byte, round int) {
	t.Helper()
	for i, b := range got {
		for j := range b {
			if b[j] != byte(i+j+round) {
				t.Fatalf("round %d: slice %d overwritten at byte %d", round, i, j)
			}
		}
	}
}

// TestSlabReusesEveryChunk: a transaction that outgrows one chunk
// allocates nothing in the next one of the same size, and no slice handed
// out shares memory with another of its transaction.
func TestSlabReusesEveryChunk(t *testing.T) {
	var s slab
	checkSlab(t, fillSlab(&s, 0), 0)
	held := s.size()
	if len(s.full) < 2 {
		t.Fatalf("the first round filled %d chunks; the test needs several", len(s.full)+1)
	}
	payload := make([]byte, 1216)
	allocs := testing.AllocsPerRun(5, func() {
		s.reset()
		for i := 0; i < 3000; i++ {
			n := 16 + (i*37)%1200
			b := s.scratch(n)
			b = append(b, payload[:n]...)
			_ = b
		}
	})
	if allocs != 0 {
		t.Errorf("a reused slab allocated %.0f times a transaction, want 0", allocs)
	}
	if s.size() > held {
		t.Errorf("the slab grew from %d to %d bytes by reuse", held, s.size())
	}
	s.reset()
	checkSlab(t, fillSlab(&s, 9), 9)
}

// TestSlabTrim: trim keeps at most its limit, the smallest chunks first,
// and a trimmed slab still hands out memory.
func TestSlabTrim(t *testing.T) {
	var s slab
	fillSlab(&s, 0)
	s.reset()
	total := s.size()
	s.trim(total / 2)
	if got := s.size(); got > total/2 || got == 0 {
		t.Errorf("trimmed to %d bytes of %d, limit %d", got, total, total/2)
	}
	s.trim(0)
	if got := s.size(); got != 0 {
		t.Errorf("trimmed to 0, the slab holds %d bytes", got)
	}
	checkSlab(t, fillSlab(&s, 3), 3)
}

// TestKeptSlabsAreBounded: writers returned to the free list with large
// slabs keep at most slabKeptTotal beyond their small chunks, the count
// follows writers out of the list, and a writer taken again reuses its
// slab.
func TestKeptSlabsAreBounded(t *testing.T) {
	e := &Engine{writers: make(chan *writer, freeWriters), now: time.Now}
	var ws []*writer
	for i := 0; i < freeWriters; i++ {
		w := &writer{e: e}
		fillSlab(&w.slab, i)
		fillSlab(&w.slab, i) // 2 rounds: well over a megabyte
		ws = append(ws, w)
	}
	for _, w := range ws {
		e.releaseWriter(w)
	}
	if kept := e.slabsKept.Load(); kept > slabKeptTotal || kept <= 0 {
		t.Errorf("idle writers keep %d bytes beyond their small chunks, want (0, %d]", kept, slabKeptTotal)
	}
	var sum int64
	var held int
	for _, w := range ws {
		sum += w.slabKept
		held += w.slab.size()
		if w.slab.size() > slabKeptMax {
			t.Errorf("a writer keeps %d bytes, more than %d", w.slab.size(), slabKeptMax)
		}
	}
	if sum != e.slabsKept.Load() {
		t.Errorf("writers count %d bytes, the engine %d", sum, e.slabsKept.Load())
	}
	if held > slabKeptTotal+freeWriters*slabKeptSmall {
		t.Errorf("idle writers hold %d bytes", held)
	}
	// One more writer than the list holds is not kept, nor counted.
	extra := &writer{e: e}
	fillSlab(&extra.slab, 0)
	before := e.slabsKept.Load()
	e.releaseWriter(extra)
	if e.slabsKept.Load() != before {
		t.Errorf("a writer the full list refused changed the count from %d to %d", before, e.slabsKept.Load())
	}
	for range ws {
		w := e.newWriter(nil)
		if w.slabKept != 0 {
			t.Fatal("a writer taken from the list still counts its slab")
		}
	}
	if kept := e.slabsKept.Load(); kept != 0 {
		t.Errorf("with the list empty, %d bytes are still counted", kept)
	}
}

// TestGroupsOfSuperBatchesReuseTheSlab: in a real engine, super batches
// written by many goroutines at once (so in groups, group_commit.go)
// read back exactly, while the writers' slabs are reused across groups.
func TestGroupsOfSuperBatchesReuseTheSlab(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tb := f.table(store.TableDef{Name: "Super1", Super: true, Comparator: "BytesType", SubComparator: "BytesType"})
	const writers, rounds, rowsEach = 16, 40, 8
	value := func(round int) []byte { return bytes.Repeat([]byte{byte(round)}, 64) }
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		go func(g int) {
			var err error
			for r := 0; r < rounds && err == nil; r++ {
				m := store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "row-%d-%d", g, r%rowsEach)}
				for sc := 0; sc < 10; sc++ {
					for c := 0; c < 10; c++ {
						m.Ops = append(m.Ops, store.Op{Kind: store.OpPut, Super: fmt.Appendf(nil, "sc%d", sc),
							Name: fmt.Appendf(nil, "c%d", c), Value: value(r), Timestamp: int64(r + 1), HasTimestamp: true})
					}
				}
				err = f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{m}})
			}
			errs <- err
		}(g)
	}
	for g := 0; g < writers; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if f.e.groupedWrites.Load() == 0 {
		t.Log("no writes shared a group in this run; the slabs were still reused by later transactions")
	}
	for g := 0; g < writers; g++ {
		for r := 0; r < rowsEach; r++ {
			key := fmt.Sprintf("row-%d-%d", g, r)
			last := rounds - rowsEach + r // the last round that wrote the row
			res := f.slice(tb, key, store.SliceQuery{Count: all})
			if len(res.Supers) != 10 {
				t.Fatalf("row %s: %d super columns, want 10", key, len(res.Supers))
			}
			for _, sc := range res.Supers {
				if len(sc.Cells) != 10 {
					t.Fatalf("row %s super %s: %d subcolumns, want 10", key, sc.Name, len(sc.Cells))
				}
				for _, c := range sc.Cells {
					if c.Timestamp != int64(last+1) || !bytes.Equal(c.Value, value(last)) {
						t.Fatalf("row %s cell %s/%s: timestamp %d, value %x; want %d", key, sc.Name, c.Name, c.Timestamp, c.Value[:4], last+1)
					}
				}
			}
		}
	}
}

// TestSlabKeepsWhatItsLastTransactionUsed: after a large transaction and
// a small one, the slab holds no more than the small one needed.
func TestSlabKeepsWhatItsLastTransactionUsed(t *testing.T) {
	var s slab
	fillSlab(&s, 0)
	s.reset()
	large := s.size()
	s.scratch(100)
	s.reset()
	if got := s.size(); got >= large || got > slabMaxChunk {
		t.Errorf("after a transaction of 100 bytes the slab holds %d bytes (%d after the large one)", got, large)
	}
	s.scratch(100)
	s.reset()
	if got := s.size(); got == 0 {
		t.Error("the slab dropped the chunk its last transaction used")
	}
}
