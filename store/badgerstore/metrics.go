package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// Stats is what the store's files hold, for metrics: read from this
// store's own structures when asked, never from Badger's process-wide
// counters.
type Stats struct {
	// LSMBytes is the size of the LSM tree's tables, every level.
	LSMBytes int64
	// VlogBytes is the disk space of the value log files (values too
	// large to live in the LSM tree). Badger sizes a new value log file
	// to its 2 GiB maximum at once, a sparse file: its apparent size
	// (and Badger's own DB.Size, refreshed once a minute) says nothing of
	// the data, so where the system tells the blocks a file holds, they
	// are what is counted (see diskBytes).
	VlogBytes int64
	// Levels are the LSM tree's levels, from L0.
	Levels []LevelStats
	// GroupedWrites counts the writers whose rows committed in a
	// transaction shared with others since the store opened;
	// AloneAfterGroup those that applied their rows alone after their
	// group failed (group_commit.go).
	GroupedWrites, AloneAfterGroup int64
	// DeferredWrites counts the writes acknowledged before they were
	// applied since the store opened, DeferredPending those not applied
	// yet, DeferredDropped those Badger refused for good (deferred.go).
	DeferredWrites, DeferredPending, DeferredDropped int64
	// SharedReads counts the reads that took the snapshot another read
	// had opened, OwnReads those that opened one (snapshot.go).
	SharedReads, OwnReads int64
	// CounterCacheHits and CounterCacheMisses count the counter adds
	// whose counter the counter cache knew, and those it did not;
	// CounterCacheBytes is the memory it has allocated
	// (counter_cache.go).
	CounterCacheHits, CounterCacheMisses, CounterCacheBytes int64
	// CounterFilterSkips counts the adds the counter cache did not know
	// whose counter the counter filter vouched absent, so that they read
	// nothing; CounterFilterBytes is the memory of the counter filters
	// (key_filter.go).
	CounterFilterSkips, CounterFilterBytes int64
	// PackCacheHits and PackCacheMisses count the reads of packs by
	// writes into super columns that the pack cache answered, and those
	// it did not; PackCacheBytes is the memory it has allocated
	// (pack_cache.go).
	PackCacheHits, PackCacheMisses, PackCacheBytes int64
	// CellCacheHits and CellCacheMisses count the reads of one named cell
	// the cell cache answered and those it did not; CellCacheBytes is the
	// memory it has allocated (cell_cache.go).
	CellCacheHits, CellCacheMisses, CellCacheBytes int64
	// RowImageHits and RowImageMisses count the reads of standard rows,
	// once a slice of their family took a row's image, that the cell
	// cache answered with the row's image and those it did not
	// (row_image.go).
	RowImageHits, RowImageMisses int64
	// MarkFilterSkips counts the reads of row marks, or of a pack of a
	// row mutation that read no mark, that the row mark filters spared:
	// they vouched that the row has no mark, so no pack;
	// MarkFilterBytes is the memory of the filters (key_filter.go,
	// rowmark.go).
	MarkFilterSkips, MarkFilterBytes int64
	// AllocatorBytesReleased counts the bytes of the idle allocators of
	// Badger's table builders that the engine released (allocpool.go).
	AllocatorBytesReleased int64
	// DiskFreeBytes is the free space of the data directory's file
	// system, and DiskReserveBytes the reserve below which writes are
	// refused (diskspace.go); both 0 for a store in memory.
	DiskFreeBytes, DiskReserveBytes int64
}

// LevelStats is one level of the LSM tree.
type LevelStats struct {
	Level  int
	Tables int
	Bytes  int64
}

// Stats returns the sizes of the store's LSM tree, by level, and of its
// value log. It reads the level controller and lists the value-log
// directory: cheap enough for a metrics scrape, too costly for a request.
// A closed store reports nothing.
func (e *Engine) Stats() (Stats, error) {
	if e.db.IsClosed() {
		return Stats{}, badger.ErrDBClosed
	}
	cc, pc, cells := e.counters.stats(), e.packs.stats(), e.cells.stats()
	skipped, filterBytes := e.counterFilters.stats()
	markSkipped, markBytes := e.markFilters.stats()
	st := Stats{GroupedWrites: e.groupedWrites.Load(), AloneAfterGroup: e.aloneAfterGroup.Load(),
		SharedReads: e.snapshots.shared.Load(), OwnReads: e.snapshots.opened.Load(),
		CounterCacheHits: cc.hits, CounterCacheMisses: cc.misses, CounterCacheBytes: cc.bytes,
		CounterFilterSkips: skipped, CounterFilterBytes: filterBytes,
		PackCacheHits: pc.hits, PackCacheMisses: pc.misses, PackCacheBytes: pc.bytes,
		CellCacheHits: cells.hits, CellCacheMisses: cells.misses, CellCacheBytes: cells.bytes,
		RowImageHits: cells.rowHits, RowImageMisses: cells.rowMisses,
		MarkFilterSkips: markSkipped, MarkFilterBytes: markBytes,
		AllocatorBytesReleased: e.allocatorBytesReleased.Load()}
	if d := e.deferred; d != nil {
		st.DeferredPending, st.DeferredDropped = d.total.Load(), d.lost.Load()
		st.DeferredWrites = int64(d.queued.Load())
	}
	if e.disk != nil {
		e.disk.look()
		st.DiskFreeBytes, st.DiskReserveBytes = int64(e.disk.free.Load()), int64(e.disk.reserve.Load())
	}
	for _, l := range e.db.Levels() {
		st.Levels = append(st.Levels, LevelStats{Level: l.Level, Tables: l.NumTables, Bytes: l.Size})
		st.LSMBytes += l.Size
	}
	dir := e.db.Opts().ValueDir
	if dir == "" { // in memory
		return st, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return st, fmt.Errorf("list the value log directory: %w", err)
	}
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".vlog") {
			continue
		}
		info, err := entry.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // removed by value-log garbage collection meanwhile
		}
		if err != nil {
			return st, fmt.Errorf("value log file %s: %w", filepath.Join(dir, entry.Name()), err)
		}
		st.VlogBytes += diskBytes(info)
	}
	return st, nil
}

// Check reports whether the store answers: it is open, its data
// directory is the one it opened, and it reads a key of its metadata (the
// partitioner). For health checks.
func (e *Engine) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.db.IsClosed() {
		return errors.New("badger store closed")
	}
	if e.disk != nil {
		e.disk.look()
		if err := e.disk.goneErr(); err != nil {
			return err
		}
	}
	err := e.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(partitionerKey)
		return err
	})
	if err != nil {
		return fmt.Errorf("read the store's partitioner: %w", err)
	}
	return nil
}
