package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// profiledKinds are the profiles compare --profiles takes of thriftd
// over each of its measured turns, by the name of thriftd's profiles
// endpoint: the CPU and the mutex contention of those seconds. Blocking
// is left out: sampling every wait of every call would slow thriftd down
// in the table it is compared in.
var profiledKinds = []string{"profile", "mutex"}

// allocationsAt is the heap profile after a collection, taken before and
// after each measured turn. Go publishes allocations at the end of a
// collection, so a profile of the allocations of some seconds (allocs?
// seconds=N) shows nothing when none ended in them, as under gets, which
// allocate little; the difference of these two holds the turn's.
const allocationsAt = "heap?gc=1"

// turnProfiler takes profiles of thriftd from its profiles endpoint
// (thriftd --pprof-listen) while a mode is measured, into dir:
// thriftd-MODE-roundN.cpu.pprof and .mutex.pprof, and the heap before
// and after, .allocs-before.pprof and .allocs-after.pprof, for
// `go tool pprof` (the allocations of the turn: -sample_index=alloc_space
// -base X.allocs-before.pprof X.allocs-after.pprof).
type turnProfiler struct {
	addr   string // host:port of thriftd's profiles endpoint
	dir    string
	log    *slog.Logger
	client *http.Client

	mu     sync.Mutex
	rounds map[string]int // turns profiled, by mode
	failed error          // the first profile that could not be taken
}

func newTurnProfiler(addr, dir string, log *slog.Logger) *turnProfiler {
	return &turnProfiler{addr: addr, dir: dir, log: log, client: &http.Client{}, rounds: map[string]int{}}
}

// profileSeconds is how long each profile of a turn of d samples: the
// whole seconds of d, at least one (the endpoint takes whole seconds).
func profileSeconds(d time.Duration) int {
	return max(int(d/time.Second), 1)
}

// start takes the heap before a turn at mode that lasts d, begins its
// profiles, and returns the function that waits for them to be written
// and takes the heap after it.
func (p *turnProfiler) start(ctx context.Context, mode string, d time.Duration) (ended func()) {
	p.mu.Lock()
	p.rounds[mode]++
	round := p.rounds[mode]
	p.mu.Unlock()
	file := func(what string) string {
		return filepath.Join(p.dir, fmt.Sprintf("thriftd-%s-round%d.%s.pprof", mode, round, what))
	}
	p.note(mode, round, "allocs before", p.take(ctx, allocationsAt, file("allocs-before")))
	secs := strconv.Itoa(profileSeconds(d))
	var wg sync.WaitGroup
	for _, kind := range profiledKinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what := kind
			if kind == "profile" {
				what = "cpu"
			}
			p.note(mode, round, what, p.take(ctx, kind+"?seconds="+secs, file(what)))
		}()
	}
	return func() {
		wg.Wait()
		p.note(mode, round, "allocs after", p.take(ctx, allocationsAt, file("allocs-after")))
	}
}

// note logs a profile that could not be taken, and keeps the first.
func (p *turnProfiler) note(mode string, round int, what string, err error) {
	if err == nil {
		return
	}
	p.log.Warn("profile not taken", "mode", mode, "round", round, "profile", what, "err", err)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = fmt.Errorf("profile %s of mode %s, round %d: %w", what, mode, round, err)
	}
}

// take asks the endpoint for the profile at query (a path under
// /debug/pprof/ with its parameters) and writes it to path.
func (p *turnProfiler) take(ctx context.Context, query, path string) error {
	ctx, cancel := context.WithTimeout(ctx, profileTimeout)
	defer cancel()
	url := "http://" + p.addr + "/debug/pprof/" + query
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// profileTimeout bounds the wait for one profile: its seconds are a
// turn's.
const profileTimeout = 2 * time.Minute

// err is the first profile that could not be taken, if any.
func (p *turnProfiler) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}
