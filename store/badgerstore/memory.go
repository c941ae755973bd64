package badgerstore

import (
	"github.com/dgraph-io/badger/v4"
)

// Memory. What Badger holds in memory, with its own defaults, was what
// made thriftd's resident set reach 1.4 GiB under load:
//
//   - memtables: each is a skiplist arena on the Go heap (allocated whole,
//     MemTableSize plus room for a transaction), and its write-ahead log,
//     a memory-mapped file whose written pages count as resident too.
//     Badger keeps the mutable one, up to NumMemtables full ones waiting
//     for their flush and the one being flushed: with 128 MiB memtables
//     and NumMemtables 5, up to 7 arenas of 166 MiB under a write burst.
//   - the block cache (256 MiB by default), which holds decompressed
//     blocks;
//   - compaction: NumCompactors compactions build tables at once;
//   - the table builders' allocators, which Badger pools and the engine
//     releases once idle (allocpool.go);
//   - the pages of the mapped table files, resident once written or read
//     (see maptrim_linux.go).
//
// A memory budget sizes them all; the process around the engine (thriftd)
// sets the Go runtime's memory limit from the same budget. The sizes are
// in MemorySizing, and docs/PERFORMANCE.md tells how they were chosen.

// DefaultMemoryBudget is the memory budget of an engine opened without
// one: what a small server gives a store.
const DefaultMemoryBudget = 256 << 20

// minMemoryBudget is the smallest budget accepted: below it the memtables
// would bound transactions to a few hundred kilobytes.
const minMemoryBudget = 64 << 20

// MemorySizing is how a memory budget is shared among Badger's
// structures.
type MemorySizing struct {
	// Budget is the budget the sizes come from, in bytes.
	Budget int64
	// MemTable is Badger's MemTableSize: a memtable is flushed once it
	// holds this much. Badger bounds a transaction, so the largest row
	// mutation, to 15% of it (MaxTransaction).
	MemTable int64
	// NumMemtables is how many full memtables may wait for their flush.
	NumMemtables int
	// BlockCache is the size of the cache of table blocks.
	BlockCache int64
	// CounterCache bounds the cache of the counters updated last, which
	// spares an add its read (counter_cache.go).
	CounterCache int64
	// PackCache bounds the cache of the super columns' packs written
	// last, which spares a write into a hot super column its read
	// (pack_cache.go).
	PackCache int64
	// CellCache bounds the cache of the cells that reads of one named
	// column found, and of the images of small rows that slices of whole
	// rows took, which spare the next reads their look-ups in Badger
	// (cell_cache.go, row_image.go).
	CellCache int64
	// CounterFilter bounds the filters of the keys each counter family
	// may hold, which spare the first add of a counter its read
	// (key_filter.go).
	CounterFilter int64
	// MarkFilter bounds the filters of the rows of each marked family
	// that may have a mark, which spare a write into a super column its
	// read of the row's mark (key_filter.go, rowmark.go).
	MarkFilter int64
	// Compactors is the number of concurrent compactions.
	Compactors int
	// LevelZeroTables is how many tables (flushed memtables) level 0
	// holds before they are compacted into the next level; writes stall
	// at three times as many. Badger's point read looks in every table
	// of level 0 whose bloom filter may hold the key, and does not stop
	// at the newest version, so a write that reads its row first (a row
	// pack, a counter) pays for every table there: under minutes of
	// super batches into stored rows, the rate fell with each table
	// level 0 gained, and at 10 tables runs of 30 rounds collapsed to
	// 3-5k calls/s for their last rounds. At 5, Badger's own default,
	// they kept 9-19k (mean 12.1-15.1k against 9.4-13.2k), while short
	// rounds of every mode measured as before (docs/PERFORMANCE-LOG.md,
	// "Level 0 back at 5 tables").
	LevelZeroTables int
	// ValueLogFile is the size of a value log file. Values of 1 MiB and
	// more go to the value log, a memory-mapped file whose written pages
	// stay resident while it is open.
	ValueLogFile int64
	// MappedFiles is the process's resident memory of mapped files
	// (RssFile: the store's tables and logs, the program's code) above
	// which the engine asks the kernel to reclaim the pages of its mapped
	// tables (maptrim_linux.go).
	MappedFiles int64
	// GoLimit is the soft limit of the Go runtime's memory that the
	// process should set (runtime/debug.SetMemoryLimit): the budget less
	// the write-ahead logs, which are mapped files, not Go memory.
	GoLimit int64
}

// SizeMemory shares a budget (bytes; 0: DefaultMemoryBudget) among
// Badger's structures: an eighth for each memtable (8 MiB to 256 MiB), at
// most one full memtable waiting for its flush, an eighth each for the
// block cache and the cell cache (256 MiB at most), a thirty-second each for the counter cache and the pack cache
// (64 MiB at most each), a sixty-fourth for the counter filters (32 MiB
// at most) and a hundred-and-twenty-eighth for the row mark filters (16
// MiB at most), two compactors, a quarter for the resident pages of
// mapped files; level 0 compacted at 5 tables.
func SizeMemory(budget int64) MemorySizing {
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	budget = max(budget, minMemoryBudget)
	s := MemorySizing{
		Budget:          budget,
		MemTable:        min(max(budget/8, 8<<20), 256<<20),
		NumMemtables:    1,
		BlockCache:      budget / 8,
		CounterCache:    min(budget/32, 64<<20),
		PackCache:       min(budget/32, 64<<20),
		CellCache:       min(budget/8, 256<<20),
		CounterFilter:   min(budget/64, 32<<20),
		MarkFilter:      min(budget/128, 16<<20),
		Compactors:      2,
		LevelZeroTables: 5,
		ValueLogFile:    min(max(budget/4, 32<<20), 1<<30-1),
	}
	s.MappedFiles = budget / 4
	// Up to three memtables (mutable, waiting, flushing) have written
	// pages in their logs.
	s.GoLimit = budget - 3*s.MemTable/2
	return s
}

// MaxTransaction is the most a transaction, so a row mutation or an
// atomic batch, may hold: Badger refuses one over 15% of the memtable.
func (s MemorySizing) MaxTransaction() int64 { return s.MemTable * 15 / 100 }

// Apply sets the sizes on Badger's options (thriftbench opens its raw
// Badger ceiling with them, so that it holds what the engine holds). Tables stay compressed
// (Snappy, Badger's default): the block cache holds decompressed blocks,
// so hot reads need neither the mapped table pages nor a decompression,
// while a table written without compression cannot be cached at all
// (Badger charges a block read from the mapping with the rest of the
// file, so every block is rejected: a 2% hit ratio under thriftbench).
func (s MemorySizing) Apply(o badger.Options) badger.Options {
	return o.WithMemTableSize(s.MemTable).
		WithNumMemtables(s.NumMemtables).
		WithBlockCacheSize(s.BlockCache).
		WithNumCompactors(s.Compactors).
		WithNumLevelZeroTables(s.LevelZeroTables).
		WithNumLevelZeroTablesStall(3 * s.LevelZeroTables).
		WithValueLogFileSize(s.ValueLogFile)
}
