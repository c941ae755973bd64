package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Daemon is a running thriftd: the store, the handler and the server.
type Daemon struct {
	engine store.Engine
	server *legacy.Server
	// done is closed when Serve has returned, with its error in served.
	done   chan struct{}
	served error

	// stopGuard stops the guard of the Go memory limit (memory.go).
	stopGuard func()

	// authLock is the data directory's lock, held until Stop
	// (authentication); nil with a CQL backend and no users to keep.
	authLock *auth.Lock

	// admin serves online backups on the data directory's admin socket
	// (admin.go); nil when the socket's path is too long.
	admin *adminServer

	// metrics are the Prometheus metrics and the /metrics and /healthz
	// endpoint (metrics.go); nil without metrics_listen.
	metrics *metrics

	// profiles serve Go's runtime profiles (profiles.go); nil without
	// pprof_listen.
	profiles *profiles
}

// Option changes how Start runs thriftd, beyond its settings.
type Option func(*options)

type options struct {
	now        func() time.Time
	gcInterval time.Duration
	// wrapHandler, set by tests only (export_test.go), wraps the handler
	// the server calls: how a test injects a failure such as a panic.
	wrapHandler func(cassandra.Cassandra) cassandra.Cassandra
}

// WithClock runs the store and the handler on now instead of the real
// clock: tests and fixtures run on the time of a data set.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// WithGCInterval sets how often the store collects tombstones past
// gc_grace_seconds (default 10 minutes; negative: never), so that a test
// sees no collection it did not ask for.
func WithGCInterval(d time.Duration) Option {
	return func(o *options) { o.gcInterval = d }
}

// Start opens the backend (the Badger store in cfg.DataDir, or the CQL
// cluster of cfg.Backend: see BackendSpec), wires the Thrift handler to it
// and serves on cfg.Listen (port 0: a free port, see Addr) until Stop. Serving
// runs on its own goroutine and outlives ctx, which bounds the opening
// only: stopping goes through Stop's graceful shutdown.
func Start(ctx context.Context, cfg Config, logger *slog.Logger, opts ...Option) (*Daemon, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if logger == nil {
		logger = slog.Default()
	}
	part, err := cfg.PartitionerImpl()
	if err != nil {
		return nil, err
	}
	serverCfg := cfg.Server()
	if serverCfg.TLS, err = cfg.ClientEncryption.TLSConfig(); err != nil {
		return nil, err
	}
	// --- Backend (backend.go). ---
	engine, err := openEngine(ctx, cfg, part, logger, o)
	if err != nil {
		return nil, err
	}
	backend, _ := cfg.BackendSpec()
	cfg.DataDir = cfg.StoreDir()
	// --- End of backend. ---
	// --- Authentication (auth.go). ---
	var authLock *auth.Lock
	var authn legacy.Authenticator
	if backend.Kind == BackendBadger || cfg.AuthenticatorClass() == PasswordAuthenticator {
		authLock, authn, err = openAuth(ctx, cfg, engine, logger)
		if err != nil {
			engine.Close()
			return nil, err
		}
	}
	// --- End of authentication. ---
	mx := newMetrics(cfg, engine, logger) // metrics.go
	serverCfg.Observer = mx.observer()
	handler := legacy.NewHandler(engine, legacy.HandlerConfig{
		ClusterName:  cfg.ClusterName,
		APIVersion:   cfg.APIVersion,
		Snitch:       cfg.SnitchClass(),
		RPCAddress:   cfg.Listen,
		InitialToken: cfg.InitialToken,
		Ring:         cfg.RingConfig.handlerRing(),
		Now:          o.now,
		Auth:         authn,

		StorageObserver: mx.storageObserver(),
	}, logger)
	var served cassandra.Cassandra = handler
	if o.wrapHandler != nil {
		served = o.wrapHandler(handler)
	}
	srv := legacy.NewServer(serverCfg, served, logger)
	if err := srv.Listen(); err != nil {
		engine.Close()
		if authLock != nil {
			authLock.Unlock()
		}
		return nil, err
	}
	// --- Backups (admin.go): under the data directory's lock. ---
	// A CQL backend's data is the cluster's to back up.
	var admin *adminServer
	if local, ok := engine.(*badgerstore.Engine); ok {
		admin, err = startAdmin(cfg, local, logger)
	}
	if err != nil {
		_ = srv.Shutdown(ctx)
		engine.Close()
		authLock.Unlock()
		return nil, err
	}
	// --- End of backups. ---
	// The Go memory limit, set once nothing can fail before Stop takes it
	// off (memory.go).
	var guard *limitGuard
	if local, ok := engine.(*badgerstore.Engine); ok {
		guard = limitGoMemory(local.Memory(), logger)
	}
	attrs := []any{"addr", srv.Addr().String(), "backend", backend.Kind, "partitioner", engine.Partitioner().Name(), "tls", serverCfg.TLS != nil}
	if backend.Kind == BackendBadger {
		// A cluster's thriftd keeps nothing in a data directory (its
		// users are in the cluster too) and has no commit log of its own.
		attrs = append(attrs, "data_dir", cfg.DataDir, "commitlog_sync", cfg.CommitlogSync)
	}
	logger.Info("thriftd listening", attrs...)
	d := &Daemon{engine: engine, authLock: authLock, server: srv, admin: admin, done: make(chan struct{}), stopGuard: func() {}}
	if guard != nil {
		guardCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		guarded := make(chan struct{})
		go func() {
			guard.run(guardCtx)
			close(guarded)
		}()
		d.stopGuard = func() { stop(); <-guarded }
	}
	go func() {
		d.served = srv.Serve(context.WithoutCancel(ctx))
		close(d.done)
	}()
	if err := d.serveMetrics(cfg, mx, logger); err != nil {
		return nil, errors.Join(err, d.Stop(ctx))
	}
	if err := d.serveProfiles(cfg, logger); err != nil {
		return nil, errors.Join(err, d.Stop(ctx))
	}
	return d, nil
}

// Addr is where the server listens.
func (d *Daemon) Addr() net.Addr { return d.server.Addr() }

// Done is closed when the server stops serving: after Stop, or on its own
// when accepting connections fails (Stop then returns the failure).
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Stop shuts the server down gracefully, letting the calls in flight
// finish (until ctx ends, when the connections are cut), and closes the
// store. It returns the first failure: of the shutdown, of serving, of
// closing the store.
func (d *Daemon) Stop(ctx context.Context) error {
	d.metrics.beginStop()
	err := d.server.Shutdown(ctx)
	<-d.done
	// The metrics endpoint stops before the store closes: no scrape
	// reads a closed store.
	if merr := d.metrics.shutdown(ctx); merr != nil && err == nil {
		err = merr
	}
	if perr := d.profiles.shutdown(ctx); perr != nil && err == nil {
		err = perr
	}
	if err == nil && d.served != nil && !errors.Is(d.served, legacy.ErrServerClosed) {
		err = d.served
	}
	if aerr := d.admin.close(); aerr != nil && err == nil {
		err = aerr
	}
	d.stopGuard()
	if cerr := d.engine.Close(); cerr != nil && err == nil {
		err = cerr
	}
	if d.authLock != nil {
		if uerr := d.authLock.Unlock(); uerr != nil && err == nil {
			err = uerr
		}
	}
	return err
}
