package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// SyncMode says when writes reach the disk.
type SyncMode int

const (
	// SyncPeriodic syncs the write-ahead log every SyncPeriod; a crash may
	// lose the writes of the last period (Cassandra's default).
	SyncPeriodic SyncMode = iota
	// SyncBatch syncs before acknowledging every write.
	SyncBatch
)

// Options configure an Engine.
type Options struct {
	// Dir is the data directory.
	Dir string
	// Partitioner lays rows out; it cannot change once data is written.
	Partitioner partition.Partitioner
	Sync        SyncMode
	// SyncPeriod is the interval of SyncPeriodic (default 10s).
	SyncPeriod time.Duration
	// Logger receives the engine's and Badger's messages.
	Logger *slog.Logger
	// Now is the clock (tests set it); default time.Now.
	Now func() time.Time
	// InMemory keeps everything in memory (tests and benchmarks).
	InMemory bool
	// GCInterval is how often tombstones past gc_grace_seconds are
	// collected (default 10 minutes; negative: never, CollectGarbage
	// only).
	GCInterval time.Duration
	// TrimInterval is how often the engine checks the resident pages of
	// its mapped tables (default trimInterval; negative: never, and a test
	// that trims by hand sees nothing trim behind its back).
	TrimInterval time.Duration
	// MemoryBudget sizes Badger's memtables, block cache and compactions
	// (bytes; 0: DefaultMemoryBudget; see SizeMemory).
	MemoryBudget int64
	// UnpackedSuperColumns stores the subcolumns of new Super families in
	// an entry each, as stores written before packs did (pack.go); tests
	// of that layout set it.
	UnpackedSuperColumns bool
	// ApplyBeforeAcknowledging applies every write to Badger before
	// Apply returns, as the sync batch does but without its fsync: no
	// write is deferred (deferred.go). Tests of the engine's write path
	// set it.
	ApplyBeforeAcknowledging bool
}

// Engine is the Badger storage engine. It implements store.Engine.
type Engine struct {
	db   *badger.DB
	part partition.Partitioner
	log  *slog.Logger
	now  func() time.Time

	memory MemorySizing
	// trimmer reclaims the pages of mapped tables (maptrim_linux.go); nil
	// in memory and where the system has no way to.
	trimmer *mappedTrimmer

	catalog atomic.Pointer[store.Catalog]
	// writers pools the write-path scratch state (writer and its slab)
	// across transactions.
	writers chan *writer
	// slabsKept is what the writers in the free list keep of their slabs
	// beyond a small chunk each (slab.go).
	slabsKept atomic.Int64
	schemaMu  sync.Mutex // serialises schema changes
	// unpackedSupers: new Super families are not packed (pack.go).
	unpackedSupers bool
	// unpackedRows: new packed families keep no row packs (rowpack.go);
	// tests set it to compare.
	unpackedRows bool
	// rowLocks serialises the writers of each row (see rowlock.go).
	rowLocks *rowLocks
	// group lets concurrent writers share a transaction (group_commit.go);
	// groupedWrites counts the writers whose rows committed in a shared
	// transaction, aloneAfterGroup those applied alone after their group
	// failed.
	group                          groupCommitter
	groupedWrites, aloneAfterGroup atomic.Int64
	// writes counts the writes to the store, and snapshots holds the read
	// transaction that reads share while it does not change (snapshot.go).
	writes    atomic.Uint64
	snapshots readSnapshots
	// tsFloor, tsBound: the timestamps of the cells stored before the
	// engine opened, and of every cell stored, are at most these; a
	// write above both and its stripe's greatest needs no read
	// (timestamps.go). tsBoundMu serialises raising the bound.
	tsFloor, tsBound atomic.Int64
	tsBoundMu        sync.Mutex
	// unreadWrites counts the cell writes that skipped their read.
	unreadWrites atomic.Int64
	// unmarkedRows counts the row mutations that read no pack: their row
	// had no mark (rowmark.go).
	unmarkedRows atomic.Int64
	// allocatorBytesReleased counts the bytes of the idle table
	// allocators taken out of Badger's pool and released (allocpool.go).
	allocatorBytesReleased atomic.Int64
	// counters caches the counters updated last (counter_cache.go).
	counters *counterCache
	// counterFilters hold the keys of each counter family that may
	// have a record, markFilters the rows of each marked family that may
	// have a mark (key_filter.go).
	counterFilters, markFilters *keyFilters
	// packs caches the packs of super columns written last
	// (pack_cache.go).
	packs *recentCache
	// cells keeps the cells reads of one named column found
	// (cell_cache.go).
	cells *cellCache
	// headers are the rows that may have a header (headers.go).
	headers headerFilter
	// readers keeps the readers of one row's reads for reuse
	// (releaseReader).
	readers sync.Pool

	stop     chan struct{}
	dropKick chan struct{}
	// disk refuses writes on a nearly full disk (diskspace.go); nil in
	// memory.
	disk *diskGuard
	bg   sync.WaitGroup
	// deferred queues the writes acknowledged before Badger has them
	// (deferred.go); nil with the sync batch.
	deferred *deferredWrites
}

var _ store.Engine = (*Engine)(nil)

// Open opens (creating if needed) the store in opts.Dir.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Partitioner == nil {
		return nil, errors.New("badgerstore: no partitioner")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = 10 * time.Second
	}
	// A row mutation must fit in one transaction, which Badger bounds by
	// the memtable size: the budget bounds the largest row mutation
	// (MemorySizing.MaxTransaction).
	memory := SizeMemory(opts.MemoryBudget)
	bopts := memory.Apply(badger.DefaultOptions(opts.Dir)).
		WithLogger(badgerLogger{opts.Logger}).
		WithSyncWrites(opts.Sync == SyncBatch).
		WithInMemory(opts.InMemory).
		WithNumVersionsToKeep(1).
		WithCompactL0OnClose(false).
		// Values in the value log (1 MB or more) are checked against
		// their CRC when read: a damaged log is an error, not data.
		WithVerifyValueChecksum(true)
	if opts.InMemory {
		bopts.Dir, bopts.ValueDir = "", ""
	} else if err := checkDataDir(opts.Dir, opts.Logger); err != nil { // integrity.go
		return nil, err
	}
	db, err := badger.Open(bopts)
	if err != nil {
		return nil, fmt.Errorf("open badger store in %q: %w", opts.Dir, err)
	}
	locks := newRowLocks()
	e := &Engine{
		db:             db,
		memory:         memory,
		part:           opts.Partitioner,
		log:            opts.Logger,
		now:            opts.Now,
		rowLocks:       locks,
		cells:          newCellCache(memory.CellCache, locks),
		counters:       newCounterCache(memory.CounterCache),
		counterFilters: newKeyFilters(counterKeys, memory.CounterFilter),
		markFilters:    newKeyFilters(rowMarkKeys, memory.MarkFilter),
		packs:          newWholeGroupCache(memory.PackCache),
		writers:        make(chan *writer, freeWriters),
		stop:           make(chan struct{}),
		dropKick:       make(chan struct{}, 1),
		group:          groupCommitter{syncsEachCommit: opts.Sync == SyncBatch},

		unpackedSupers: opts.UnpackedSuperColumns,
	}
	if !opts.InMemory {
		compactions := func() uint64 { return compactionRoom(db.Levels()) }
		if e.disk, err = newDiskGuard(opts.Dir, memory, compactions, opts.Logger); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := e.checkPartitioner(); err != nil {
		db.Close()
		return nil, err
	}
	if err := e.loadCatalog(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := e.loadFilters(); err != nil {
		close(e.stop)
		e.bg.Wait()
		db.Close()
		return nil, err
	}
	if opts.Sync == SyncPeriodic && !opts.ApplyBeforeAcknowledging {
		if err := e.openDeferred(opts.Dir, opts.InMemory); err != nil {
			close(e.stop)
			e.bg.Wait()
			db.Close()
			return nil, err
		}
	}
	if opts.Sync == SyncPeriodic && !opts.InMemory {
		e.every(opts.SyncPeriod, e.periodicSync)
	}
	e.bg.Add(1)
	go e.dropPendingLoop()
	if opts.GCInterval == 0 {
		opts.GCInterval = 10 * time.Minute
	}
	if opts.GCInterval > 0 {
		e.every(opts.GCInterval, e.collectInBackground)
	}
	if !opts.InMemory {
		e.startTrimming(opts.Dir, opts.TrimInterval)
	}
	e.startDrainingAllocators()
	return e, nil
}

// startDrainingAllocators starts the periodic release of the idle
// allocators of Badger's table builders (allocpool.go).
func (e *Engine) startDrainingAllocators() {
	pool, err := badgerAllocatorPool(e.db)
	if err != nil {
		e.log.Warn("Badger's idle table allocators will stay in memory", "err", err)
		return
	}
	e.every(poolDrainInterval, func(context.Context) {
		e.allocatorBytesReleased.Add(drainAllocatorPool(pool))
	})
}

// trimInterval is how often the engine checks the resident pages of its
// mapped tables. A check reads /proc/self/status; the trim it may start
// reads /proc/self/maps. Under reads and compactions of a store a whole
// make bench-compare built, the table pages grew by more than 50 MiB between
// checks 2 s apart: checked every 0.5 s, the process's file-backed pages
// peaked at 70-76 MiB instead of 91-109 (docs/PERFORMANCE-LOG.md,
// "Table pages checked every half second").
const trimInterval = 500 * time.Millisecond

// startTrimming starts the periodic reclaim of mapped table pages, every
// interval (0: trimInterval; negative: never).
func (e *Engine) startTrimming(dir string, interval time.Duration) {
	t, err := newMappedTrimmer(dir, e.memory.MappedFiles)
	if err != nil {
		e.log.Warn("mapped tables will stay resident", "err", err)
	}
	if t == nil {
		return
	}
	e.trimmer = t
	if interval == 0 {
		interval = trimInterval
	}
	if interval > 0 {
		e.every(interval, e.trimMappedTables)
	}
}

var partitionerKey = []byte{nsSchema, schemaMeta, 'p', 'a', 'r', 't'}

// checkPartitioner records the partitioner of a new store and refuses to
// open an existing one with another: rows are laid out by their tokens.
func (e *Engine) checkPartitioner() error {
	return e.update(func(txn *badger.Txn) error {
		item, err := txn.Get(partitionerKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return txn.Set(partitionerKey, []byte(e.part.Name()))
		}
		if err != nil {
			return fmt.Errorf("read the store's partitioner: %w", err)
		}
		stored, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("read the store's partitioner: %w", err)
		}
		if string(stored) != e.part.Name() {
			return fmt.Errorf("the data directory was written with %s; it cannot be opened with %s", stored, e.part.Name())
		}
		return nil
	})
}

// Memory is how the engine shares its memory budget.
func (e *Engine) Memory() MemorySizing { return e.memory }

// Partitioner implements store.Engine.
func (e *Engine) Partitioner() partition.Partitioner { return e.part }

// Capabilities implements store.Engine: the Badger engine provides the
// whole contract.
func (e *Engine) Capabilities() store.Capabilities {
	return store.Capabilities{
		OriginalTTL:         true,
		RangeGhosts:         true,
		OrderedPartitioners: true,
		IndexedScans:        true,
		CounterRestart:      true,
		IsolatedBatches:     true,
		FreeConditions:      true,
		RetypeNames:         true,
	}
}

// Catalog implements store.Engine.
func (e *Engine) Catalog() *store.Catalog { return e.catalog.Load() }

// Close stops background work, syncs and closes the database.
func (e *Engine) Close() error {
	deferredErr := e.stopDeferred()
	close(e.stop)
	e.bg.Wait()
	deferredErr = errors.Join(deferredErr, e.closeDeferredLog())
	e.retireSnapshot()
	// Badger's Close flushes its memtable into the directory by its name:
	// into a removed directory it retries for ever, into a replacement it
	// writes tables that are not its own. The store is left as it is
	// then; its last writes are lost with the directory.
	if e.disk.movedAway() {
		return fmt.Errorf("close badger store: %w: %s; its last writes were not flushed", ErrDataDirGone, e.disk.dir)
	}
	if err := e.db.Close(); err != nil {
		return errors.Join(deferredErr, fmt.Errorf("close badger store: %w", err))
	}
	return deferredErr
}

// nowSeconds is the engine clock in Unix seconds.
func (e *Engine) nowSeconds() uint32 {
	return uint32(e.now().Unix())
}

// loadFilters loads, at open, what lets writes and reads skip a read:
// the timestamp bound (timestamps.go), the key filters (key_filter.go)
// and the header filter (headers.go).
func (e *Engine) loadFilters() error {
	empty := true
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsData}})
		defer it.Close()
		it.Rewind()
		empty = !it.Valid()
		return nil
	})
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	if err := e.loadTimestampBound(empty); err != nil {
		return err
	}
	firstNew := uint32(math.MaxUint32) // a family of a store with data may have keys
	if empty {
		firstNew = 0
	}
	e.publishKeyFilters(e.catalog.Load(), firstNew)
	return e.loadHeaderFilter(empty)
}

// background runs fn once on a background goroutine; fn's context ends
// when the engine closes.
func (e *Engine) background(fn func(ctx context.Context)) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-e.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		fn(ctx)
	}()
}

// every runs fn every period on a background goroutine until the engine
// closes; fn's context ends when the engine closes.
func (e *Engine) every(period time.Duration, fn func(ctx context.Context)) {
	e.background(func(ctx context.Context) {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	})
}

func (e *Engine) periodicSync(context.Context) {
	if err := e.db.Sync(); err != nil {
		e.log.Error("periodic sync failed", "err", err)
	}
	if d := e.deferred; d != nil && d.log != nil {
		if err := d.log.sync(); err != nil {
			e.log.Error("periodic sync failed", "err", err)
		}
	}
}

// badgerLogger routes Badger's messages to slog; Badger's info chatter is
// logged at debug level. A message is formatted only when its level is
// enabled: Badger logs at debug level on every batch of writes it commits,
// and formatting those for nothing was 3% of thriftd's CPU under counter
// updates.
type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) logf(level slog.Level, f string, a []any) {
	ctx := context.Background()
	if !b.l.Enabled(ctx, level) {
		return
	}
	b.l.Log(ctx, level, fmt.Sprintf(f, a...), "component", "badger")
}

func (b badgerLogger) Errorf(f string, a ...any)   { b.logf(slog.LevelError, f, a) }
func (b badgerLogger) Warningf(f string, a ...any) { b.logf(slog.LevelWarn, f, a) }
func (b badgerLogger) Infof(f string, a ...any)    { b.logf(slog.LevelDebug, f, a) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.logf(slog.LevelDebug, f, a) }
