package main

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

// daemon is a running thriftd: the store, the handler and the server.
type daemon struct {
	engine *badgerstore.Engine
	server *legacy.Server
	served chan error
}

// startDaemon opens the store and starts serving; Serve runs on its own
// goroutine and reports on served.
func startDaemon(ctx context.Context, cfg legacy.ServerConfig, logger *slog.Logger) (*daemon, error) {
	part, err := cfg.PartitionerImpl()
	if err != nil {
		return nil, err
	}
	sync := badgerstore.SyncPeriodic
	if cfg.CommitlogSync == legacy.CommitlogSyncBatch {
		sync = badgerstore.SyncBatch
	}
	engine, err := badgerstore.Open(ctx, badgerstore.Options{
		Dir:         cfg.DataDir,
		Partitioner: part,
		Sync:        sync,
		SyncPeriod:  cfg.CommitlogSyncPeriod(),
		Logger:      logger,
	})
	if err != nil {
		return nil, err
	}
	handler := legacy.NewHandler(engine, legacy.HandlerConfig{
		ClusterName:  cfg.ClusterName,
		APIVersion:   cfg.APIVersion,
		Snitch:       cfg.SnitchClass(),
		RPCAddress:   cfg.Listen,
		InitialToken: cfg.InitialToken,
	}, logger)
	srv := legacy.NewServer(cfg, handler, logger)
	if err := srv.Listen(); err != nil {
		engine.Close()
		return nil, err
	}
	logger.Info("thriftd listening", "addr", srv.Addr().String(), "data_dir", cfg.DataDir,
		"partitioner", part.Name(), "commitlog_sync", cfg.CommitlogSync)
	d := &daemon{engine: engine, server: srv, served: make(chan error, 1)}
	// Serve gets a context of its own: stopping goes through the graceful
	// Shutdown in stop, not through Serve's immediate close.
	go func() { d.served <- srv.Serve(context.WithoutCancel(ctx)) }()
	return d, nil
}

// addr is where the server listens.
func (d *daemon) addr() net.Addr { return d.server.Addr() }

// stop shuts the server down gracefully and closes the store.
func (d *daemon) stop(ctx context.Context) error {
	err := d.server.Shutdown(ctx)
	if serveErr := <-d.served; err == nil && !errors.Is(serveErr, legacy.ErrServerClosed) {
		err = serveErr
	}
	if cerr := d.engine.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
