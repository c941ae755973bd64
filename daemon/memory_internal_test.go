package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
)

// fakeHeap is a heap whose live size the test sets; a collection (the
// collector's or the guard's) finds freed live, when the test set it.
type fakeHeap struct {
	liveBytes, freed int64
	n                uint64
	collects         int
	releases         int
}

func (h *fakeHeap) live() int64    { return h.liveBytes }
func (h *fakeHeap) cycles() uint64 { return h.n }
func (h *fakeHeap) collect() {
	h.collects++
	h.gc()
}
func (h *fakeHeap) release() { h.releases++ }

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

// look is one look of the guard at a heap the collector found live.
func look(g *limitGuard, heap *fakeHeap, live int64) {
	heap.liveBytes = live
	heap.gc()
	g.adjust()
}

func TestLimitGuardFollowsALiveHeapAboveTheBudget(t *testing.T) {
	var logs bytes.Buffer
	heap := &fakeHeap{}
	g, set := newTestGuard(heap, &logs)

	look(g, heap, 100<<20)
	if len(*set) != 0 || g.limit != 208<<20 {
		t.Fatalf("live heap of 100 MiB: limit set to %v, now %d MiB; want the budget's 208 left alone", *set, g.limit>>20)
	}
	// A burst: the collector finds 245 MiB live; the limit follows at once.
	look(g, heap, 245<<20)
	if g.limit != 271<<20 || len(*set) != 1 || (*set)[0] != 271<<20 {
		t.Fatalf("live heap of 245 MiB: limit %d MiB (set %v); want 271 (245 + 26)", g.limit>>20, *set)
	}
	// A higher heap raises it at once, to the MiB.
	look(g, heap, 245<<20+4<<10)
	if len(*set) != 2 || g.limit != 272<<20 {
		t.Fatalf("live heap of 245 MiB + 4 KiB: limit %d MiB, set %d times; want 272 MiB, set twice", g.limit>>20, len(*set))
	}
	look(g, heap, 245<<20+4<<10)
	if len(*set) != 2 {
		t.Fatalf("the same heap twice set the limit again: %v", *set)
	}
	// A lower heap lowers it only after quietLooks looks, to the highest
	// limit wanted meanwhile.
	for i := range quietLooks - 1 {
		look(g, heap, int64(230-i)<<20)
	}
	if len(*set) != 2 || g.limit != 272<<20 {
		t.Fatalf("after %d looks at a lower heap: limit %d MiB (set %v); want 272 still", quietLooks-1, g.limit>>20, *set)
	}
	look(g, heap, 200<<20)
	if len(*set) != 3 || g.limit != 256<<20 {
		t.Fatalf("after %d looks at a heap of 230 MiB and lower: limit %d MiB (set %v); want 256 (230 + 26)", quietLooks, g.limit>>20, *set)
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
		if g.limit != 240<<20 {
			t.Fatalf("look %d (live %d MiB): limit %d MiB (set %v); want 240 held", i, live>>20, g.limit>>20, *set)
		}
	}
	// The load goes on with a smaller heap: the budget's limit again, the
	// memory left to the runtime.
	for range quietLooks {
		look(g, heap, 170<<20)
	}
	if g.limit != 208<<20 || len(*set) != 2 {
		t.Fatalf("limit %d MiB (set %v); want 240 then 208", g.limit>>20, *set)
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
	if g.limit != 271<<20 {
		t.Fatalf("limit %d MiB, want 271", g.limit>>20)
	}
	// The burst ends: Badger frees its buffers, nothing allocates, so no
	// collection runs. The guard collects after quietLooks looks.
	heap.freed = 90 << 20
	for i := 1; i < quietLooks; i++ {
		g.adjust()
	}
	if heap.collects != 0 || g.limit != 271<<20 {
		t.Fatalf("after %d quiet looks: %d collections, limit %d MiB; want none yet, 271", quietLooks-1, heap.collects, g.limit>>20)
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
	// At the budget's limit a quiet server is the collector's business.
	for range 3 * quietLooks {
		g.adjust()
	}
	if heap.collects != 1 || heap.releases != 1 {
		t.Errorf("at the budget's limit the guard collected %d times and gave memory back %d times, want 1 and 1", heap.collects, heap.releases)
	}
	if !strings.Contains(logs.String(), "the Go memory limit is the budget's again") || !strings.Contains(logs.String(), "memory_given_back=true") {
		t.Errorf("no message on coming back to the budget's limit with the memory given back:\n%s", logs.String())
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
