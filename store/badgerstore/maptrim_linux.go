package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Badger maps every table file into memory, and writes each new table (a
// flush, a compaction) through its mapping: every page of every table
// written or read since the start stays resident, counted in the process's
// resident set (RssFile), until the kernel needs the memory, which on a
// large machine is never. With the budget bounding Badger's own memory,
// these pages became most of thriftd's resident set and grew with the
// store.
//
// The engine therefore watches the process's file-backed resident memory
// and, once it exceeds MemorySizing.MappedFiles, asks the kernel to
// reclaim the pages of the store's table mappings (madvise MADV_PAGEOUT,
// Linux 5.4): clean pages are dropped, and a page read again comes back
// from the disk. MADV_PAGEOUT never changes memory contents, so a range
// that Badger unmaps (and the process maps again for something else)
// between reading /proc/self/maps and the call loses nothing: anonymous
// memory without swap cannot be paged out at all.

// mappedTrimmer reclaims the resident pages of the table files of one
// store directory.
type mappedTrimmer struct {
	dir   string // the store directory, absolute, symbolic links resolved
	limit uint64 // file-backed resident bytes above which it trims
	proc  procfs.Proc
	off   bool // the kernel refused MADV_PAGEOUT: trimming is off
}

func newMappedTrimmer(dir string, limit int64) (*mappedTrimmer, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store directory: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	proc, err := procfs.Self()
	if err != nil {
		return nil, fmt.Errorf("open /proc/self: %w", err)
	}
	return &mappedTrimmer{dir: abs, limit: uint64(limit), proc: proc}, nil
}

// overLimit reports whether the process's file-backed resident memory
// exceeds the limit.
func (m *mappedTrimmer) overLimit() (bool, error) {
	st, err := m.proc.NewStatus()
	if err != nil {
		return false, fmt.Errorf("read /proc/self/status: %w", err)
	}
	return st.RssFile > m.limit, nil
}

// trim asks the kernel to reclaim the pages of every mapping of a table
// file of the store and returns how many mappings it advised.
func (m *mappedTrimmer) trim() (int, error) {
	if m.off {
		return 0, nil
	}
	maps, err := m.proc.ProcMaps()
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/maps: %w", err)
	}
	n := 0
	for _, pm := range maps {
		if !strings.HasSuffix(pm.Pathname, ".sst") || filepath.Dir(pm.Pathname) != m.dir {
			continue // not a table of this store, or a deleted one
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, pm.StartAddr, pm.EndAddr-pm.StartAddr, unix.MADV_PAGEOUT)
		switch {
		case errno == unix.EINVAL && n == 0:
			m.off = true
			return 0, errors.New("the kernel does not support MADV_PAGEOUT (Linux 5.4): mapped tables stay resident")
		case errno != 0 && errno != unix.ENOMEM: // ENOMEM: unmapped meanwhile
			return n, fmt.Errorf("madvise %s: %w", pm.Pathname, errno)
		}
		n++
	}
	return n, nil
}

// trimMappedTables is the engine's periodic check.
func (e *Engine) trimMappedTables(ctx context.Context) {
	e.trimmer.trimIfOver(ctx, e.log)
}

// trimIfOver trims when the process's file-backed resident memory is
// over the limit, and logs what it did or what failed.
func (m *mappedTrimmer) trimIfOver(ctx context.Context, log *slog.Logger) {
	over, err := m.overLimit()
	if err == nil && over {
		var n int
		n, err = m.trim()
		if n > 0 {
			log.DebugContext(ctx, "asked the kernel to reclaim mapped tables", "tables", n)
		}
	}
	if err != nil {
		log.WarnContext(ctx, "mapped tables", "err", err)
	}
}
