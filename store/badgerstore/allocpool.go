package badgerstore

import (
	"errors"
	"reflect"
	"time"
	"unsafe"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"
)

// Badger builds every table, of a flush or of a compaction, in a
// z.Allocator that it takes from a pool the DB keeps and gives back once
// the table is written. Without jemalloc, which thriftd is built without,
// an allocator's buffers are Go memory, and a pooled allocator keeps every
// buffer it grew: the flush of a memtable of 32 MiB of values that do not
// compress grows one to 124 MiB (the blocks, then their compressed copies,
// in buffers that double). The pool holds up to 8 idle allocators and
// gives one back to the runtime only after 2 s in which no table was
// begun, which a steady write load never allows. Under inserts of 2 KB
// random values thriftd's resident set reached 1.35-1.56 GB with a budget
// of 256 MiB, and kept 650-740 MB 5 s after the load stopped
// (docs/PERFORMANCE-LOG.md, "Idle table allocators released").
//
// Badger has no option for its pool. The engine (and a restore, see
// startRestoreUpkeep) therefore reads the pool's address once, after
// badger.Open (the DB's unexported field allocPool: a read, ordered
// after Open's write of it), and every poolDrainInterval takes every
// idle allocator out of the pool and releases it, through the pool's own
// goroutine-safe methods. A table begun within an interval of another's
// end still reuses its allocator; no allocator stays idle longer than an
// interval.

// poolDrainInterval is how long an idle allocator may stay in Badger's
// pool.
const poolDrainInterval = 250 * time.Millisecond

// freshAllocatorBytes is the size of an allocator that the pool makes
// when it has none to give (z.NewAllocator's smallest).
const freshAllocatorBytes = 512

// badgerAllocatorPool returns the pool of table allocators of db.
func badgerAllocatorPool(db *badger.DB) (*z.AllocatorPool, error) {
	f := reflect.ValueOf(db).Elem().FieldByName("allocPool")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*z.AllocatorPool]() {
		return nil, errors.New("badger.DB has no field allocPool of type *z.AllocatorPool")
	}
	pool := *(**z.AllocatorPool)(unsafe.Pointer(f.UnsafeAddr()))
	if pool == nil {
		return nil, errors.New("badger.DB has no allocator pool")
	}
	return pool, nil
}

// maxDrained bounds the allocators one drain takes: the pool holds 8,
// and builders may give theirs back while it drains.
const maxDrained = 64

// drainAllocatorPool releases the idle allocators of pool and returns the
// bytes they held. The pool must not have been released: the engine
// stops draining before it closes Badger.
func drainAllocatorPool(pool *z.AllocatorPool) int64 {
	var released int64
	for range maxDrained {
		a := pool.Get(1, "drain")
		n := a.Allocated()
		a.Release()
		if n <= freshAllocatorBytes {
			break // the pool was empty: Get made this one
		}
		released += int64(n)
	}
	return released
}
