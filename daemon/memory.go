package daemon

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"time"

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
// or an embedding program): the limit belongs to the whole process. It
// returns the guard that keeps the limit above the live heap and takes it
// off when the daemon stops (run it), or nil when the limit was set
// already.
func limitGoMemory(sizing badgerstore.MemorySizing, logger *slog.Logger) *limitGuard {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		logger.Info("the Go memory limit is set already; the store's budget leaves it", "limit_mib", debug.SetMemoryLimit(-1)>>20)
		return nil
	}
	debug.SetMemoryLimit(sizing.GoLimit)
	logger.Info("memory budget", "budget_mib", sizing.Budget>>20, "memtable_mib", sizing.MemTable>>20,
		"block_cache_mib", sizing.BlockCache>>20, "cell_cache_mib", sizing.CellCache>>20, "counter_cache_mib", sizing.CounterCache>>20, "go_limit_mib", sizing.GoLimit>>20,
		"largest_mutation_kib", sizing.MaxTransaction()>>10)
	return &limitGuard{
		base: sizing.GoLimit,
		// An eighth: 26 MiB at the default budget. Under super batches a
		// quarter gave 6% more calls than an eighth for a peak 10%
		// higher, and a whole make bench-compare left 281 MiB resident.
		headroom: sizing.GoLimit / 8,
		limit:    sizing.GoLimit,
		setLimit: debug.SetMemoryLimit,
		heap:     runtimeHeap{},
		logger:   logger,
	}
}

// limitGuard keeps the Go memory limit a headroom above the live heap.
//
// The budget's limit can be below what is live: Badger's table builders
// keep their buffers, Go memory without jemalloc, in a pool of eight while
// writes go on, and under bursts of super column batches the live heap
// stood at 245 MiB against the 208 MiB limit of the default budget. A
// limit below the live heap cannot be met: the collector runs back to
// back (145 collections a second, 40% of thriftd's CPU) and frees
// nothing. While the live heap is above the budget's limit, the guard
// raises the limit so that the heap may grow by headroom above it before
// the next collection (limitForHeapGoal), and lowers it again as the
// heap shrinks, so the budget's limit holds whenever it can. A server
// that went quiet with the limit raised allocates nothing, so nothing
// would collect what Badger frees after the burst: the guard then
// collects itself, once a second, and gives the freed memory back to the
// system when the limit is the budget's again.
//
// A server that goes quiet at the budget's limit gives its free memory
// back too, once per quiet spell: the runtime keeps the heap it grew
// under load and returns it to the system only slowly (RssAnon 181 MiB
// 5 s after a make bench-compare run; 75-83 MiB when given back). The
// guard gives the memory back after quietLooks quiet looks, and not again
// before the runtime has collected by itself, so that a server under a
// light load pays at most one more collection for each of its own.
//
// A look is quiet when the heap allocated less than quietAllocBytes since
// the one before. A look without a collection is not enough: under
// counter adds thriftd allocates about 56 MiB a second and the runtime
// collected about once a second, so the guard took the server for quiet
// between two collections, collected, and gave every free page back,
// which the load then faulted in again (1% of thriftd's CPU in the
// collection alone).
type limitGuard struct {
	base     int64 // the budget's limit
	headroom int64
	limit    int64 // the limit set last
	setLimit func(int64) int64
	heap     heapState
	logger   *slog.Logger

	cycles    uint64    // collections counted at the last look
	allocated uint64    // bytes the heap had allocated at the last look
	quietFor  int       // quiet looks in a row
	givenBack bool      // the free memory went back since the runtime last collected
	logged    time.Time // when a change of the limit was last logged at info
	lowerFor  int       // looks that wanted a lower limit, in a row
	lowerTo   int64     // the highest of the limits they wanted
}

// heapState is what the guard reads of the Go heap and asks of the
// collector (runtimeHeap outside tests).
type heapState interface {
	live() int64       // the heap the last collection found live
	overhead() int64   // the memory the limit counts outside heap objects and free heap
	cycles() uint64    // collections so far
	allocated() uint64 // bytes allocated so far
	collect()          // a collection now
	release()          // a collection, and the free memory back to the system
}

// limitGuardPeriod is how often the guard looks at the live heap;
// quietLooks is how many looks without a collection make a raised limit's
// server quiet.
const (
	limitGuardPeriod = 100 * time.Millisecond
	quietLooks       = 10
	// quietAllocBytes: a look is quiet below 1 MiB allocated since the
	// one before, 10 MiB a second (an idle thriftd allocates about 0.2).
	quietAllocBytes = 1 << 20
)

// run adjusts the limit every limitGuardPeriod until ctx ends (the
// daemon stops), when it takes the limit off: the process has none again,
// as before the daemon started.
func (g *limitGuard) run(ctx context.Context) {
	t := time.NewTicker(limitGuardPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			g.setLimit(math.MaxInt64)
			return
		case <-t.C:
			g.adjust()
		}
	}
}

// adjust sets the limit to the budget's, or to headroom above the live
// heap when that is higher (rounded up to a MiB, so that small moves of
// the heap leave it). A higher limit is set at once; a lower one once
// the guard has wanted it for quietLooks looks, and then the highest it
// wanted meanwhile: under super batches the live heap swings by 40 MiB
// twice a second as table builders come and go, and a limit that came
// down with each swing would have the collector run back to back until
// the next look.
func (g *limitGuard) adjust() {
	if c := g.heap.cycles(); c != g.cycles {
		g.cycles, g.givenBack = c, false
	}
	allocated := g.heap.allocated()
	quiet := allocated-g.allocated < quietAllocBytes
	g.allocated = allocated
	if !quiet {
		g.quietFor = 0
	} else if g.quietFor++; g.quietFor >= quietLooks {
		switch {
		case g.limit > g.base:
			g.heap.collect()
			g.cycles, g.quietFor = g.heap.cycles(), 0
		case !g.givenBack:
			g.giveBack()
		}
	}
	live := g.heap.live()
	want := max(g.base, limitForHeapGoal(live+g.headroom, g.heap.overhead()))
	if want >= g.limit {
		g.lowerFor, g.lowerTo = 0, 0
		g.set(want, live, false)
		return
	}
	g.lowerTo = max(g.lowerTo, want)
	if g.lowerFor++; g.lowerFor >= quietLooks {
		g.set(g.lowerTo, live, quiet)
		g.lowerFor, g.lowerTo = 0, 0
	}
}

// runtimeGoalReservePercent is the share of the heap goal the Go runtime
// keeps back under a memory limit, for its pacing errors
// (memoryLimitHeapGoalHeadroomPercent in runtime/mgcpacer.go, Go 1.21 and
// later).
const runtimeGoalReservePercent = 3

// limitForHeapGoal is the memory limit, rounded up to a MiB so that small
// moves of the heap leave it, under which the runtime lets the heap grow
// to goal before it collects: the runtime takes from the limit the memory
// it holds outside heap objects (overhead: stacks, span and collector
// metadata, the unused parts of heap spans) and then keeps
// runtimeGoalReservePercent of the rest back. A limit of live heap plus
// headroom left almost none: at 390 MiB live, the reserve (12 MiB) and
// the overhead took all of the 26 MiB, the heap goal was the live heap,
// and the collector ran 50-80 times a second, back to back.
func limitForHeapGoal(goal, overhead int64) int64 {
	const kept = 100 - runtimeGoalReservePercent
	limit := (goal*100+kept-1)/kept + overhead
	return (limit + 1<<20 - 1) &^ (1<<20 - 1)
}

// set sets the limit; coming back to the budget's limit on a quiet
// server, it gives the free memory back to the system (a server under
// load leaves that to the runtime's scavenger).
func (g *limitGuard) set(limit, live int64, quiet bool) {
	if limit == g.limit {
		return
	}
	raised := g.limit > g.base
	g.setLimit(limit)
	g.limit = limit
	// A heap that hovers about the budget's limit would raise and lower
	// it often: one message a minute says so, the others are debug.
	level := slog.LevelDebug
	if now := time.Now(); now.Sub(g.logged) >= time.Minute {
		level, g.logged = slog.LevelInfo, now
	}
	switch {
	case !raised:
		g.logger.Log(context.Background(), level, "the live heap is above the Go memory limit of the budget; the limit follows it", "live_mib", live>>20, "limit_mib", limit>>20, "budget_limit_mib", g.base>>20)
	case limit == g.base:
		if quiet {
			g.giveBack()
		}
		g.logger.Log(context.Background(), level, "the Go memory limit is the budget's again", "live_mib", live>>20, "limit_mib", limit>>20, "memory_given_back", quiet)
	}
}

// giveBack collects and gives the free memory back to the system; the
// collection it runs is the guard's, not the runtime's.
func (g *limitGuard) giveBack() {
	g.heap.release()
	g.cycles, g.quietFor, g.givenBack = g.heap.cycles(), 0, true
}

// runtimeHeap is the process's Go heap.
type runtimeHeap struct{}

func (runtimeHeap) live() int64       { return int64(readRuntimeMetrics("/gc/heap/live:bytes")[0]) }
func (runtimeHeap) cycles() uint64    { return readRuntimeMetrics("/gc/cycles/total:gc-cycles")[0] }
func (runtimeHeap) allocated() uint64 { return readRuntimeMetrics("/gc/heap/allocs:bytes")[0] }
func (runtimeHeap) collect()          { runtime.GC() }
func (runtimeHeap) release()          { debug.FreeOSMemory() }

// overhead is what the runtime's pacer counts as non-heap memory: the
// memory mapped and not given back, less the free heap and the heap
// objects.
func (runtimeHeap) overhead() int64 {
	m := readRuntimeMetrics("/memory/classes/total:bytes", "/memory/classes/heap/released:bytes",
		"/memory/classes/heap/free:bytes", "/memory/classes/heap/objects:bytes")
	return max(0, int64(m[0])-int64(m[1])-int64(m[2])-int64(m[3]))
}

// readRuntimeMetrics reads counters or gauges of runtime/metrics, in the
// order of their names (0 for one this runtime does not have).
func readRuntimeMetrics(names ...string) []uint64 {
	s := make([]rtmetrics.Sample, len(names))
	for i, name := range names {
		s[i].Name = name
	}
	rtmetrics.Read(s)
	values := make([]uint64, len(names))
	for i := range s {
		if s[i].Value.Kind() == rtmetrics.KindUint64 {
			values[i] = s[i].Value.Uint64()
		}
	}
	return values
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
