package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"sync"
	"time"
)

// ProfilesPath is where the profiles endpoint (pprof_listen) serves Go's
// runtime profiles, in the format `go tool pprof` reads.
const ProfilesPath = "/debug/pprof/"

// Sampling of the contention profiles: one mutex contention event in
// mutexProfileFraction, while the endpoint is on; blocking events with a
// probability of their length over blockProfileRate (every event of
// blockProfileRate or longer), while a block profile is being taken.
const (
	mutexProfileFraction = 10
	blockProfileRate     = int(100 * time.Microsecond)
)

// profiles is the HTTP endpoint of Go's runtime profiles: CPU, heap,
// allocations, goroutines, mutex and block contention, execution traces.
type profiles struct {
	listener net.Listener
	server   *http.Server
	served   chan struct{}

	// blockProfiles counts the block profiles being taken; blocking
	// events are sampled while it is above zero.
	mu            sync.Mutex
	blockProfiles int
}

// serveProfiles starts the profiles endpoint on cfg.PprofListen, if set.
//
// Go samples mutex and block contention only when told to. Mutex
// contention is sampled while the endpoint is on: it costs a stack trace
// on one contended unlock in ten, and Go misses the contention of a
// mutex whose waiters never drain if it begins sampling after they
// queued. Blocking events are sampled only while a profile of them is
// being taken (/debug/pprof/block?seconds=N): a blocking event is every
// wait of a goroutine, and under durable writes, whose every call waits
// for a sync, sampling them took 2% of thriftd's CPU.
func (d *Daemon) serveProfiles(cfg Config, logger *slog.Logger) error {
	if cfg.PprofListen == "" {
		return nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", cfg.PprofListen)
	if err != nil {
		return fmt.Errorf("profiles endpoint: listen on %s: %w", cfg.PprofListen, err)
	}
	p := &profiles{listener: ln, served: make(chan struct{})}
	mux := http.NewServeMux()
	// Not the command line (pprof.Cmdline): it may hold a password
	// (--cql-password), and go tool pprof does not need it.
	mux.HandleFunc(ProfilesPath, pprof.Index) // the named profiles: heap, allocs, goroutine, threadcreate...
	mux.HandleFunc(ProfilesPath+"profile", pprof.Profile)
	mux.HandleFunc(ProfilesPath+"symbol", pprof.Symbol)
	mux.HandleFunc(ProfilesPath+"trace", pprof.Trace)
	mux.Handle(ProfilesPath+"block", p.sampleBlocking(pprof.Handler("block")))
	// No write timeout: a CPU profile or a trace answers after the
	// seconds it is asked for.
	p.server = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: metricsReadHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	runtime.SetMutexProfileFraction(mutexProfileFraction)
	d.profiles = p
	go func() {
		defer close(p.served)
		if err := p.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("profiles endpoint stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	logger.Info("profiles endpoint listening", "addr", ln.Addr().String(), "path", ProfilesPath)
	return nil
}

// sampleBlocking serves the block profile: with seconds, the blocking
// sampled during those seconds; without, what the earlier ones sampled.
func (p *profiles) sampleBlocking(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("seconds") == "" {
			h.ServeHTTP(w, r)
			return
		}
		p.countBlockProfile(+1)
		defer p.countBlockProfile(-1)
		h.ServeHTTP(w, r)
	})
}

// countBlockProfile counts a block profile that starts (+1) or ends
// (-1), and turns Go's sampling of blocking events on with the first and
// off after the last.
func (p *profiles) countBlockProfile(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blockProfiles += delta
	switch {
	case delta > 0 && p.blockProfiles == 1:
		runtime.SetBlockProfileRate(blockProfileRate)
	case delta < 0 && p.blockProfiles == 0:
		runtime.SetBlockProfileRate(0)
	}
}

// ProfilesAddr is where the profiles endpoint listens, or nil without
// one (pprof_listen empty).
func (d *Daemon) ProfilesAddr() net.Addr {
	if d.profiles == nil {
		return nil
	}
	return d.profiles.listener.Addr()
}

// shutdown stops the endpoint, letting the profiles being taken finish
// until ctx ends (a profile or trace in progress is cut then), and stops
// sampling mutex contention.
func (p *profiles) shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	err := p.server.Shutdown(ctx)
	if err != nil {
		// Shutdown gave up on the requests still running: cut them.
		err = errors.Join(err, p.server.Close())
	}
	<-p.served
	runtime.SetMutexProfileFraction(0)
	if err != nil {
		return fmt.Errorf("profiles endpoint: shutdown: %w", err)
	}
	return nil
}
