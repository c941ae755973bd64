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
	"time"
)

// ProfilesPath is where the profiles endpoint (pprof_listen) serves Go's
// runtime profiles, in the format `go tool pprof` reads.
const ProfilesPath = "/debug/pprof/"

// Sampling of the contention profiles while the profiles endpoint is on:
// one mutex contention event in mutexProfileFraction, and blocking
// events with a probability of their length over blockProfileRate (every
// event of blockProfileRate or longer).
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
}

// serveProfiles starts the profiles endpoint on cfg.PprofListen, if set,
// and turns on the sampling of mutex and block contention, which Go
// leaves off: the process's profiles show contention while it serves.
func (d *Daemon) serveProfiles(cfg Config, logger *slog.Logger) error {
	if cfg.PprofListen == "" {
		return nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", cfg.PprofListen)
	if err != nil {
		return fmt.Errorf("profiles endpoint: listen on %s: %w", cfg.PprofListen, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(ProfilesPath, pprof.Index) // the named profiles: heap, allocs, goroutine, mutex, block...
	mux.HandleFunc(ProfilesPath+"cmdline", pprof.Cmdline)
	mux.HandleFunc(ProfilesPath+"profile", pprof.Profile)
	mux.HandleFunc(ProfilesPath+"symbol", pprof.Symbol)
	mux.HandleFunc(ProfilesPath+"trace", pprof.Trace)
	p := &profiles{
		listener: ln,
		served:   make(chan struct{}),
		// No write timeout: a CPU profile or a trace answers after the
		// seconds it is asked for.
		server: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: metricsReadHeaderTimeout,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}
	runtime.SetMutexProfileFraction(mutexProfileFraction)
	runtime.SetBlockProfileRate(blockProfileRate)
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

// ProfilesAddr is where the profiles endpoint listens, or nil without
// one (pprof_listen empty).
func (d *Daemon) ProfilesAddr() net.Addr {
	if d.profiles == nil {
		return nil
	}
	return d.profiles.listener.Addr()
}

// shutdown stops the endpoint, letting the profiles being taken finish
// until ctx ends (a CPU profile or trace in progress is cut then), and
// turns the sampling of contention off again.
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
	runtime.SetBlockProfileRate(0)
	if err != nil {
		return fmt.Errorf("profiles endpoint: shutdown: %w", err)
	}
	return nil
}
