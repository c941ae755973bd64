package badgerstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dgraph-io/ristretto/v2/z"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

func TestDrainAllocatorPool(t *testing.T) {
	pool := z.NewAllocatorPool(8)
	defer pool.Release()
	if n := drainAllocatorPool(pool); n != 0 {
		t.Fatalf("an empty pool released %d bytes", n)
	}
	for range 3 {
		a := z.NewAllocator(1<<10, "test")
		for range 64 {
			a.Allocate(64 << 10) // grows it past 4 MiB, as a table builder does
		}
		pool.Return(a)
	}
	if n := drainAllocatorPool(pool); n < 3*(4<<20) {
		t.Fatalf("released %d bytes of three allocators of 4 MiB and more", n)
	}
	if n := drainAllocatorPool(pool); n != 0 {
		t.Fatalf("a drained pool released %d bytes more", n)
	}
}

// TestEngineReleasesIdleTableAllocators writes 20 MB that do not compress
// through memtables of 8 MiB, so that Badger builds tables, and checks
// that the engine releases the allocators their builders leave in
// Badger's pool. It fails if Badger no longer has the pool where the
// engine looks for it.
func TestEngineReleasesIdleTableAllocators(t *testing.T) {
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), Options{Dir: t.TempDir(), Partitioner: p, GCInterval: -1, MemoryBudget: minMemoryBudget})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := badgerAllocatorPool(e.db); err != nil {
		t.Fatal(err)
	}
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "cf", Comparator: "BytesType"})
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cells = 200, 100
	for r := range rows {
		ops := make([]store.Op, cells)
		for c := range ops {
			value := make([]byte, 1024)
			for i := range value {
				value[i] = byte(rng.Uint32())
			}
			ops[c] = store.Op{Kind: store.OpPut, Name: fmt.Appendf(nil, "c%03d", c), Value: value, Timestamp: 1}
		}
		enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "r%03d", r), Ops: ops})
	}
	// A flush of an 8 MiB memtable grows its allocator past 8 MiB.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := e.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.AllocatorBytesReleased >= 8<<20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of idle table allocators released 10 s after 20 MB were written", st.AllocatorBytesReleased)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
