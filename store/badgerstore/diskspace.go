package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ErrDiskFull is the error of a write refused because the data
// directory's file system is nearly full.
var ErrDiskFull = errors.New("not enough free disk space for writes")

// ErrDataDirGone is the error of a write refused because the data
// directory was removed, or replaced by another one, while the store was
// open. Badger's open files outlive their names, so such writes would be
// acknowledged into files no restart finds again, and its flushes would
// fail from then on: writes are refused until thriftd is restarted, as
// Cassandra's disk_failure_policy "stop" stops taking writes on a failed
// disk. Reads go on from the open files.
var ErrDataDirGone = errors.New("the data directory was removed or replaced while the store was open")

// Badger writes its logs and tables through memory maps of files it
// sizes in advance (sparse): on a full file system a write to such a
// page is a SIGBUS, which kills the process, not an error. So writes are
// refused, with ErrDiskFull, while the free space is below a reserve that
// leaves room for what Badger writes on its own:
//
//   - flushing a full memtable into a table while the next one fills its
//     log: twice the memtable size;
//   - a value log file filling: its size;
//   - compactions, which write their output whole before they remove the
//     tables they compacted (compactionRoom): measured from the levels'
//     sizes at every look, since they grow with the data;
//   - what is written between two looks at the free space, and Badger's
//     small files: diskReserveExtra.
//
// A file system smaller than that takes no write. Reads go on. As in
// Cassandra, whose writes fail when its commit log cannot be written, the
// client sees the write fail (TimedOutException), and the node stays up.
const (
	diskReserveExtra = 32 << 20
	// diskCheckEvery bounds how stale the free space known is; the
	// reserve covers what is written in that time.
	diskCheckEvery = 100 * time.Millisecond
)

// compactionRoom bounds what Badger's compactions may write before they
// remove what they compacted, from its levels' sizes. Two compactors run
// at once:
//
//   - level 0 into the base level: the tables of level 0 and the base
//     level's tables in their key range, under keys spread over the ring
//     all of both. Level 0 may be empty now and hold a flushed memtable a
//     moment later, which the reserve's memtables cover;
//   - a table of a lower level into the next one: the table, and the
//     next level's tables in its key range, estimated as the next level's
//     size in the proportion of the table to its own level (keys spread
//     evenly), the whole next level at most. An empty level at or below
//     the base level counts the whole next level: what it will take
//     (level 0's tables, when it is the base level), and so the key
//     ranges of its tables, is not known yet. At the last level, which
//     Badger rewrites into itself, two of its tables.
//
// The empty levels between level 0 and the base level take no data:
// Badger compacts level 0 into the base level directly.
func compactionRoom(levels []badger.LevelInfo) uint64 {
	var levelZero, base, other int64
	below := false // at or below the base level
	for i, l := range levels {
		switch {
		case l.Level == 0:
			levelZero = l.Size
			continue
		case l.IsBaseLevel:
			base = l.Size
			below = true
		}
		if !below && l.NumTables == 0 {
			continue
		}
		table := max(l.TargetFileSize, l.Size/int64(max(l.NumTables, 1)))
		if i+1 == len(levels) {
			other = max(other, 2*table)
			continue
		}
		next := levels[i+1].Size
		other = max(other, table+min(next, table*(next/max(l.Size, 1)+1)))
	}
	return uint64(levelZero + base + other)
}

// diskGuard refuses writes when the file system of dir is nearly full,
// or when dir is no longer the directory the store opened.
type diskGuard struct {
	dir    string
	opened os.FileInfo // dir as the store opened it
	// fixed is the part of the reserve that does not change: memtables,
	// a value log file and the extra.
	fixed uint64
	// compactions is what compactions may write now (compactionRoom of
	// the store's levels); nil for none.
	compactions func() uint64
	log         *slog.Logger

	checked atomic.Int64 // UnixNano of the last look at the free space
	free    atomic.Uint64
	reserve atomic.Uint64 // fixed and compactions at the last look
	full    atomic.Bool   // for logging the changes only
	gone    atomic.Bool   // dir was removed or replaced: for good
}

// newDiskGuard returns the guard of the store in dir, sized as memory
// says, whose compactions may write what compactions returns (nil: none).
func newDiskGuard(dir string, memory MemorySizing, compactions func() uint64, logger *slog.Logger) (*diskGuard, error) {
	opened, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	fixed := 2*uint64(memory.MemTable) + uint64(memory.ValueLogFile) + diskReserveExtra
	g := &diskGuard{dir: dir, opened: opened, fixed: fixed, compactions: compactions, log: logger}
	if err := g.readFree(); err != nil {
		return nil, err
	}
	g.checked.Store(time.Now().UnixNano())
	logger.Debug("disk space reserve", "data_dir", dir, "free_bytes", g.free.Load(), "reserve_bytes", g.reserve.Load())
	return g, nil
}

// readFree reads the free space of the data directory's file system, and
// the reserve it must keep now.
func (g *diskGuard) readFree() error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(g.dir, &st); err != nil {
		return fmt.Errorf("free space of %s: %w", g.dir, err)
	}
	reserve := g.fixed
	if g.compactions != nil {
		reserve += g.compactions()
	}
	g.reserve.Store(reserve)
	g.free.Store(st.Bavail * uint64(st.Bsize))
	return nil
}

// check returns ErrDataDirGone if the data directory is no longer the one
// the store opened, else ErrDiskFull, with the figures, if the free space
// is below the reserve.
func (g *diskGuard) check() error {
	if g == nil {
		return nil
	}
	now := time.Now().UnixNano()
	last := g.checked.Load()
	if now-last >= int64(diskCheckEvery) && g.checked.CompareAndSwap(last, now) {
		g.look()
	}
	if err := g.goneErr(); err != nil {
		return err
	}
	free, reserve := g.free.Load(), g.reserve.Load()
	if free >= reserve {
		if g.full.CompareAndSwap(true, false) {
			g.log.Warn("disk space available again: writes accepted", "data_dir", g.dir, "free_bytes", free, "reserve_bytes", reserve)
		}
		return nil
	}
	if g.full.CompareAndSwap(false, true) {
		g.log.Error("disk nearly full: writes refused until space is freed; reads go on", "data_dir", g.dir, "free_bytes", free, "reserve_bytes", reserve)
	}
	return fmt.Errorf("%w: %s has %d MiB free, below the %d MiB kept for the store's own writes (flushes, compactions)",
		ErrDiskFull, g.dir, free>>20, reserve>>20)
}

// look reads the free space of the data directory's file system and
// whether the directory is still the one the store opened.
func (g *diskGuard) look() {
	_ = g.readFree() // a failed look keeps the figures of the last one
	if g.gone.Load() {
		return
	}
	if !g.movedAway() {
		return
	}
	if g.gone.CompareAndSwap(false, true) {
		g.log.Error("the data directory was removed or replaced while the store was open: writes are refused until thriftd is restarted; reads go on",
			"data_dir", g.dir)
	}
}

// movedAway reports whether the data directory is, now, removed or
// another directory than the one the store opened.
func (g *diskGuard) movedAway() bool {
	if g == nil {
		return false
	}
	now, err := os.Stat(g.dir)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return !os.SameFile(g.opened, now)
}

// goneErr returns ErrDataDirGone once the data directory is known to be
// removed or replaced.
func (g *diskGuard) goneErr() error {
	if g == nil || !g.gone.Load() {
		return nil
	}
	return fmt.Errorf("%w: %s (writes would be lost); restart thriftd", ErrDataDirGone, g.dir)
}
