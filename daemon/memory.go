package daemon

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

// The memory budget (memory_mb, --memory) sizes the store's memtables,
// block cache and compactions (badgerstore.SizeMemory) and the soft
// memory limit of the Go runtime, so that the garbage collector returns
// freed memtables to the system before the process grows past the budget.
// docs/PERFORMANCE.md tells what the budget bounds and what it costs.

const (
	// DefaultMemoryMB is the default budget, in MiB.
	DefaultMemoryMB = badgerstore.DefaultMemoryBudget >> 20
	minMemoryMB     = 64
	maxMemoryMB     = 1 << 20
)

// limitGoMemory sets the Go runtime's soft memory limit from the store's
// sizing, unless one is set already (the GOMEMLIMIT environment variable,
// or an embedding program): the limit belongs to the whole process.
func limitGoMemory(sizing badgerstore.MemorySizing, logger *slog.Logger) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		logger.Info("the Go memory limit is set already; the store's budget leaves it", "limit_mib", debug.SetMemoryLimit(-1)>>20)
		return
	}
	debug.SetMemoryLimit(sizing.GoLimit)
	logger.Info("memory budget", "budget_mib", sizing.Budget>>20, "memtable_mib", sizing.MemTable>>20,
		"block_cache_mib", sizing.BlockCache>>20, "go_limit_mib", sizing.GoLimit>>20,
		"largest_mutation_kib", sizing.MaxTransaction()>>10)
}

// cqlGCPercent is the collector's pacing with the CQL backend. Its heap is
// what calls in flight hold, about 10 MiB under 32 connections, so at the
// default of 100 the collector ran several times a second for little:
// 400 took 15-18% off thriftd's CPU per 100-column get_slice (measured
// with thriftbench, docs/PERFORMANCE.md). The budget stays the limit.
const cqlGCPercent = 400

// paceCQLCollector sets the collector's pacing and the soft memory limit
// of a thriftd serving from a cluster, leaving what GOGC or GOMEMLIMIT (or
// an embedding program) set already.
func paceCQLCollector(budgetMB int, logger *slog.Logger) {
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		debug.SetGCPercent(cqlGCPercent)
		gogc = strconv.Itoa(cqlGCPercent)
	}
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(int64(budgetMB) << 20)
	}
	logger.Info("memory budget", "budget_mib", budgetMB, "gogc", gogc, "go_limit_mib", debug.SetMemoryLimit(-1)>>20)
}
