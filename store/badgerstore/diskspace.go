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
// leaves room for what Badger writes on its own (flushing a full
// memtable into a table while the next one fills, compactions): twice
// the memtable size and 64 MiB. A file system smaller than that takes no
// write. Reads go on. As in Cassandra, whose writes fail
// when its commit log cannot be written, the client sees the write fail
// (TimedOutException), and the node stays up.
const (
	diskReserveExtra = 64 << 20
	// diskCheckEvery bounds how stale the free space known is; the
	// reserve covers what is written in that time.
	diskCheckEvery = 100 * time.Millisecond
)

// diskGuard refuses writes when the file system of dir is nearly full,
// or when dir is no longer the directory the store opened.
type diskGuard struct {
	dir     string
	opened  os.FileInfo // dir as the store opened it
	reserve uint64
	log     *slog.Logger

	checked atomic.Int64 // UnixNano of the last look at the free space
	free    atomic.Uint64
	full    atomic.Bool // for logging the changes only
	gone    atomic.Bool // dir was removed or replaced: for good
}

func newDiskGuard(dir string, memTableSize int64, logger *slog.Logger) (*diskGuard, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil, fmt.Errorf("free space of %s: %w", dir, err)
	}
	opened, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	reserve := 2*uint64(memTableSize) + diskReserveExtra
	g := &diskGuard{dir: dir, opened: opened, reserve: reserve, log: logger}
	g.free.Store(st.Bavail * uint64(st.Bsize))
	g.checked.Store(time.Now().UnixNano())
	logger.Debug("disk space reserve", "data_dir", dir, "free_bytes", g.free.Load(), "reserve_bytes", reserve)
	return g, nil
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
	free := g.free.Load()
	if free >= g.reserve {
		if g.full.CompareAndSwap(true, false) {
			g.log.Warn("disk space available again: writes accepted", "data_dir", g.dir, "free_bytes", free, "reserve_bytes", g.reserve)
		}
		return nil
	}
	if g.full.CompareAndSwap(false, true) {
		g.log.Error("disk nearly full: writes refused until space is freed; reads go on", "data_dir", g.dir, "free_bytes", free, "reserve_bytes", g.reserve)
	}
	return fmt.Errorf("%w: %s has %d MiB free, below the %d MiB kept for the store's own writes",
		ErrDiskFull, g.dir, free>>20, g.reserve>>20)
}

// look reads the free space of the data directory's file system and
// whether the directory is still the one the store opened.
func (g *diskGuard) look() {
	var st syscall.Statfs_t
	if err := syscall.Statfs(g.dir, &st); err == nil {
		g.free.Store(st.Bavail * uint64(st.Bsize))
	}
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
