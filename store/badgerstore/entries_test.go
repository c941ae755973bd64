package badgerstore

import (
	"fmt"
	"testing"
)

// TestEntryArenaHandsOutDistinctEntries: every entry of a transaction is
// its own, holds what it was given and nothing left from an earlier
// transaction, and a reset arena reuses its chunks without allocating.
func TestEntryArenaHandsOutDistinctEntries(t *testing.T) {
	var a entryArena
	keys := make([][]byte, 3*entryChunk+5)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%04d", i)
	}
	fill := func() {
		for i, k := range keys {
			e := a.entry(k, keys[len(keys)-1-i])
			e.ExpiresAt = uint64(i + 1)
		}
	}
	fill()
	seen := map[any]bool{}
	for i := range keys {
		e := &a.chunks[i/entryChunk][i%entryChunk]
		if seen[e] {
			t.Fatalf("entry %d handed out twice", i)
		}
		seen[e] = true
		if string(e.Key) != string(keys[i]) || string(e.Value) != string(keys[len(keys)-1-i]) || e.ExpiresAt != uint64(i+1) {
			t.Fatalf("entry %d holds %q=%q expiring %d", i, e.Key, e.Value, e.ExpiresAt)
		}
	}

	a.reset()
	for _, c := range a.chunks {
		for j := range c {
			if c[j].Key != nil || c[j].Value != nil || c[j].ExpiresAt != 0 {
				t.Fatalf("a reset arena still references %q", c[j].Key)
			}
		}
	}
	if e := a.entry(keys[0], nil); e.ExpiresAt != 0 || e.Value != nil {
		t.Fatalf("a reused entry kept an earlier field: %+v", e)
	}
	a.reset()

	allocs := testing.AllocsPerRun(5, func() {
		a.reset()
		fill()
	})
	if allocs != 0 {
		t.Errorf("a reused arena allocated %.0f times a transaction, want 0", allocs)
	}
}

// TestEntryArenaKeepsABoundedPart: after a transaction of many entries,
// a released writer keeps entryChunksKept chunks.
func TestEntryArenaKeepsABoundedPart(t *testing.T) {
	var a entryArena
	for i := 0; i < 20*entryChunk; i++ {
		a.entry([]byte{1}, nil)
	}
	a.reset()
	if len(a.chunks) != entryChunksKept {
		t.Errorf("a reset arena keeps %d chunks, want %d", len(a.chunks), entryChunksKept)
	}
	if cap(a.chunks) > 0 && len(a.chunks[:cap(a.chunks)]) > entryChunksKept {
		for _, c := range a.chunks[entryChunksKept:cap(a.chunks)] {
			if c != nil {
				t.Fatal("a dropped chunk is still referenced by the arena")
			}
		}
	}
}
