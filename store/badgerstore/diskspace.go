package badgerstore

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrDiskFull is the error of a write refused because the data
// directory's file system is nearly full.
var ErrDiskFull = errors.New("not enough free disk space for writes")

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

// diskGuard refuses writes when the file system of dir is nearly full.
type diskGuard struct {
	dir     string
	reserve uint64
	log     *slog.Logger

	checked atomic.Int64 // UnixNano of the last look at the free space
	free    atomic.Uint64
	full    atomic.Bool // for logging the changes only
}

func newDiskGuard(dir string, memTableSize int64, logger *slog.Logger) (*diskGuard, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil, fmt.Errorf("free space of %s: %w", dir, err)
	}
	reserve := 2*uint64(memTableSize) + diskReserveExtra
	g := &diskGuard{dir: dir, reserve: reserve, log: logger}
	g.free.Store(st.Bavail * uint64(st.Bsize))
	g.checked.Store(time.Now().UnixNano())
	logger.Debug("disk space reserve", "data_dir", dir, "free_bytes", g.free.Load(), "reserve_bytes", reserve)
	return g, nil
}

// check returns ErrDiskFull, with the figures, if the free space is below
// the reserve.
func (g *diskGuard) check() error {
	if g == nil {
		return nil
	}
	now := time.Now().UnixNano()
	last := g.checked.Load()
	if now-last >= int64(diskCheckEvery) && g.checked.CompareAndSwap(last, now) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(g.dir, &st); err == nil {
			g.free.Store(st.Bavail * uint64(st.Bsize))
		}
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
