package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// fakeHeap is a heap whose live size the test sets; a collection (the
// collector's or the guard's) finds freed live, when the test set it.
type fakeHeap struct {
	liveBytes, freed int64
	overheadBytes    int64
	n                uint64
	allocs           uint64
	collects         int
	releases         int
}

func (h *fakeHeap) live() int64       { return h.liveBytes }
func (h *fakeHeap) overhead() int64   { return h.overheadBytes }
func (h *fakeHeap) cycles() uint64    { return h.n }
func (h *fakeHeap) allocated() uint64 { return h.allocs }
func (h *fakeHeap) collect() {
	h.collects++
	h.gc()
}
func (h *fakeHeap) release() {
	h.releases++
	h.gc()
}

// gc is a collection: what was freed since the last one is gone.
func (h *fakeHeap) gc() {
	h.n++
	if h.freed != 0 {
		h.liveBytes, h.freed = h.freed, 0
	}
}

func newTestGuard(heap *fakeHeap, logs *bytes.Buffer) (*limitGuard, *[]int64) {
	var set []int64
	return &limitGuard{
		base: 208 << 20, headroom: 26 << 20, limit: 208 << 20,
		setLimit: func(l int64) int64 { set = append(set, l); return 0 },
		heap:     heap,
		logger:   slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, &set
}

// look is one look of the guard, under load, at a heap the collector
// found live.
func look(g *limitGuard, heap *fakeHeap, live int64) {
	heap.liveBytes = live
	heap.allocs += loadAllocBytes
	heap.gc()
	g.adjust()
}

// loadAllocBytes is what a loaded server allocates between two looks:
// thriftd allocated 5.6 MiB every 100 ms under counter adds.
const loadAllocBytes = 5 << 20

// The limits the tests want are worked out by hand: a heap goal of live
// + 26 MiB needs a limit of (live + 26 MiB) / 0.97 + the overhead,
// rounded up to a MiB.

func TestLimitGuardFollowsALiveHeapAboveTheBudget(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{overheadBytes: 10 << 20}
	g, set := newTestGuard(heap, &logs)

	look(g, heap, 100<<20)
	if len(*set) != 0 || g.limit != 208<<20 {
		t.Fatalf("live heap of 100 MiB: limit set to %v, now %d MiB; want the budget's 208 left alone", *set, g.limit>>20)
	}
	// A burst: the collector finds 245 MiB live; the limit follows at once.
	look(g, heap, 245<<20)
	if g.limit != 290<<20 || len(*set) != 1 || (*set)[0] != 290<<20 {
		t.Fatalf("live heap of 245 MiB: limit %d MiB (set %v); want 290 (271 / 0.97 + 10)", g.limit>>20, *set)
	}
	// A heap 4 KiB higher wants the same limit; a MiB higher raises it at once.
	look(g, heap, 245<<20+4<<10)
	if len(*set) != 1 {
		t.Fatalf("live heap of 245 MiB + 4 KiB: limit set again: %v", *set)
	}
	look(g, heap, 246<<20)
	if len(*set) != 2 || g.limit != 291<<20 {
		t.Fatalf("live heap of 246 MiB: limit %d MiB, set %d times; want 291 MiB, set twice", g.limit>>20, len(*set))
	}
	look(g, heap, 246<<20)
	if len(*set) != 2 {
		t.Fatalf("the same heap twice set the limit again: %v", *set)
	}
	// A lower heap lowers it only after quietLooks looks, to the highest
	// limit wanted meanwhile.
	for i := range quietLooks - 1 {
		look(g, heap, int64(230-i)<<20)
	}
	if len(*set) != 2 || g.limit != 291<<20 {
		t.Fatalf("after %d looks at a lower heap: limit %d MiB (set %v); want 291 still", quietLooks-1, g.limit>>20, *set)
	}
	look(g, heap, 200<<20)
	if len(*set) != 3 || g.limit != 274<<20 {
		t.Fatalf("after %d looks at a heap of 230 MiB and lower: limit %d MiB (set %v); want 274 (256 / 0.97 + 10)", quietLooks, g.limit>>20, *set)
	}
	if heap.collects != 0 || heap.releases != 0 {
		t.Fatalf("the guard collected %d times and gave memory back %d times while the collector ran", heap.collects, heap.releases)
	}
	if !strings.Contains(logs.String(), "level=INFO") || !strings.Contains(logs.String(), "the limit follows it") {
		t.Errorf("no info message on raising the limit:\n%s", logs.String())
	}
}

func TestLimitGuardHoldsTheLimitThroughSwingsOfTheHeap(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{}
	g, set := newTestGuard(heap, &logs)
	// Table builders come and go: 214 and 170 MiB live by turns.
	for i := range 5 * quietLooks {
		live := int64(214 << 20)
		if i%3 != 0 {
			live = 170 << 20
		}
		look(g, heap, live)
		if g.limit != 248<<20 {
			t.Fatalf("look %d (live %d MiB): limit %d MiB (set %v); want 248 (240 / 0.97) held", i, live>>20, g.limit>>20, *set)
		}
	}
	// The load goes on with a smaller heap: the budget's limit again, the
	// memory left to the runtime.
	for range quietLooks {
		look(g, heap, 170<<20)
	}
	if g.limit != 208<<20 || len(*set) != 2 {
		t.Fatalf("limit %d MiB (set %v); want 248 then 208", g.limit>>20, *set)
	}
	if heap.releases != 0 {
		t.Errorf("memory given back %d times under load, want none", heap.releases)
	}
	if !strings.Contains(logs.String(), "memory_given_back=false") {
		t.Errorf("the message of coming back does not say the memory stays:\n%s", logs.String())
	}
}

func TestLimitGuardCollectsWhenQuietAndComesBackToTheBudget(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{}
	g, set := newTestGuard(heap, &logs)
	look(g, heap, 245<<20)
	if g.limit != 280<<20 {
		t.Fatalf("limit %d MiB, want 280", g.limit>>20)
	}
	// The burst ends: Badger frees its buffers, nothing allocates, so no
	// collection runs. The guard collects after quietLooks looks.
	heap.freed = 90 << 20
	for i := 1; i < quietLooks; i++ {
		g.adjust()
	}
	if heap.collects != 0 || g.limit != 280<<20 {
		t.Fatalf("after %d quiet looks: %d collections, limit %d MiB; want none yet, 280", quietLooks-1, heap.collects, g.limit>>20)
	}
	g.adjust()
	if heap.collects != 1 {
		t.Fatalf("after %d quiet looks: %d collections, want 1", quietLooks, heap.collects)
	}
	// The lower limit comes quietLooks looks later, with the memory given
	// back.
	for range quietLooks - 1 {
		g.adjust()
	}
	if g.limit != 208<<20 || (*set)[len(*set)-1] != 208<<20 {
		t.Fatalf("live heap of 90 MiB: limit %d MiB (set %v); want the budget's 208", g.limit>>20, *set)
	}
	if heap.releases != 1 {
		t.Errorf("memory given back %d times on coming back to the budget's limit, want once", heap.releases)
	}
	// The memory went back: staying quiet gives nothing back again.
	for range 3 * quietLooks {
		g.adjust()
	}
	if heap.collects != 1 || heap.releases != 1 {
		t.Errorf("quiet at the budget's limit after giving memory back: the guard collected %d times and gave memory back %d times, want 1 and 1", heap.collects, heap.releases)
	}
	if !strings.Contains(logs.String(), "the Go memory limit is the budget's again") || !strings.Contains(logs.String(), "memory_given_back=true") {
		t.Errorf("no message on coming back to the budget's limit with the memory given back:\n%s", logs.String())
	}
}

func TestLimitGuardGivesMemoryBackOncePerQuietSpell(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{}
	g, set := newTestGuard(heap, &logs)
	// Under load at the budget's limit the runtime collects between looks:
	// nothing is given back.
	for range 3 * quietLooks {
		look(g, heap, 150<<20)
	}
	if heap.releases != 0 || heap.collects != 0 {
		t.Fatalf("under load: %d releases, %d collections by the guard; want none", heap.releases, heap.collects)
	}
	// The load stops: the memory goes back once, after quietLooks looks.
	for range quietLooks - 1 {
		g.adjust()
	}
	if heap.releases != 0 {
		t.Fatalf("after %d quiet looks: %d releases, want none yet", quietLooks-1, heap.releases)
	}
	for range 5 * quietLooks {
		g.adjust()
	}
	if heap.releases != 1 {
		t.Fatalf("a quiet spell of %d looks: %d releases, want 1", 6*quietLooks-1, heap.releases)
	}
	// A light load: one collection by the runtime, then quiet again, gives
	// the memory back once more.
	look(g, heap, 120<<20)
	for range 3 * quietLooks {
		g.adjust()
	}
	if heap.releases != 2 || heap.collects != 0 || len(*set) != 0 {
		t.Errorf("after a collection of the runtime and a quiet spell: %d releases, %d collections, limits set %v; want 2, 0, none",
			heap.releases, heap.collects, *set)
	}
}

// Under counter adds the runtime collected about once a second, as often
// as the guard's quietLooks: a server that allocates is not quiet, even
// between two collections.
func TestLimitGuardGivesNothingBackUnderALoadThatRarelyCollects(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{}
	g, _ := newTestGuard(heap, &logs)
	for i := range 10 * quietLooks {
		heap.allocs += loadAllocBytes
		if i%(3*quietLooks) == 0 {
			heap.liveBytes = 150 << 20
			heap.gc()
		}
		g.adjust()
	}
	if heap.releases != 0 || heap.collects != 0 {
		t.Fatalf("under load with a collection every %d looks: %d releases, %d collections by the guard; want none", 3*quietLooks, heap.releases, heap.collects)
	}
	// A light load is quiet: the memory goes back once.
	for range 2 * quietLooks {
		heap.allocs += 256 << 10
		g.adjust()
	}
	if heap.releases != 1 {
		t.Fatalf("under a light load: %d releases, want 1", heap.releases)
	}
}

func TestLimitGuardLogsAtInfoOnceAMinute(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{}
	g, set := newTestGuard(heap, &logs)
	for i := range 6 {
		look(g, heap, int64(245+5*i)<<20)
	}
	if len(*set) != 6 {
		t.Fatalf("limits set: %v, want 6", *set)
	}
	if n := strings.Count(logs.String(), "level=INFO"); n != 1 {
		t.Errorf("%d info messages for 6 changes of the limit within a minute, want 1:\n%s", n, logs.String())
	}
}

func TestLimitGuardTakesTheLimitOffWhenTheDaemonStops(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{liveBytes: 100 << 20}
	g, set := newTestGuard(heap, &logs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.run(ctx)
	if len(*set) != 1 || (*set)[0] != math.MaxInt64 {
		t.Errorf("limits set when the daemon stops: %v, want only math.MaxInt64 (none)", *set)
	}
}

func TestLimitForHeapGoal(t *testing.T) {
	for _, c := range []struct{ goal, overhead, want int64 }{
		{97 << 20, 0, 100 << 20},
		{97<<20 + 1, 0, 101 << 20},
		{291 << 20, 9 << 20, 309 << 20},
		{271 << 20, 10 << 20, 290 << 20},
	} {
		if got := limitForHeapGoal(c.goal, c.overhead); got != c.want {
			t.Errorf("limitForHeapGoal(%d, %d) = %d, want %d", c.goal, c.overhead, got, c.want)
		}
	}
}

// TestLimitForHeapGoalMatchesTheRuntime sets the limit the guard would set
// for a heap goal of the live heap plus 16 MiB, and reads the goal the
// Go runtime then paces to.
func TestLimitForHeapGoalMatchesTheRuntime(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	// GOGC's own goal (twice the live heap) must be above the limit's.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	ballast := make([]byte, 64<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	// The limit is rounded up to a MiB, and the overhead moves a little
	// between its reading and the runtime's: more than the margin when
	// the goroutines that earlier tests left behind (servers closing,
	// Badger's) allocate or exit in between, so a few readings may be
	// taken, each one from the start.
	var heap runtimeHeap
	var live, want, goal int64
	for range 5 {
		// The free heap of earlier tests goes back to the system first:
		// while more memory is mapped than the limit, the runtime takes
		// the excess off the goal too, until its scavenger has given it
		// back.
		debug.SetMemoryLimit(math.MaxInt64)
		debug.FreeOSMemory()
		live = heap.live()
		want = live + 16<<20
		debug.SetMemoryLimit(limitForHeapGoal(want, heap.overhead()))
		goal = int64(readRuntimeMetrics("/gc/heap/goal:bytes")[0])
		if goal >= want-1<<20 && goal <= want+2<<20 {
			break
		}
		t.Logf("live heap %d KiB, heap goal wanted %d KiB, the runtime's %d KiB: reading again", live>>10, want>>10, goal>>10)
	}
	if goal < want-1<<20 || goal > want+2<<20 {
		t.Errorf("live heap %d KiB, heap goal wanted %d KiB: the runtime's goal under the guard's limit is %d KiB", live>>10, want>>10, goal>>10)
	}
	// The limit the guard set before, live heap plus headroom, left the
	// runtime a goal below what was asked.
	debug.SetMemoryLimit(want)
	short := int64(readRuntimeMetrics("/gc/heap/goal:bytes")[0])
	if short >= want-1<<20 {
		t.Errorf("a limit of live heap + 16 MiB gave a goal of %d KiB, want one well below %d KiB", short>>10, want>>10)
	}
	t.Logf("live heap %d KiB, overhead %d KiB: goal %d KiB under the guard's limit, %d KiB under live + 16 MiB", live>>10, heap.overhead()>>10, goal>>10, short>>10)
	runtime.KeepAlive(ballast)
}
