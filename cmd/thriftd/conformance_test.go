package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
)

// thriftdTarget starts thriftd on a fresh Badger directory on 127.0.0.1:0.
func thriftdTarget(t testing.TB, opts conformance.Options) string {
	t.Helper()
	cfg := legacy.DefaultServerConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	if opts.Partitioner != "" {
		cfg.Partitioner = opts.Partitioner
	}
	if opts.ClusterName != "" {
		cfg.ClusterName = opts.ClusterName
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := startDaemon(context.Background(), cfg, logger)
	if err != nil {
		t.Fatalf("start thriftd: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.stop(ctx); err != nil {
			t.Errorf("stop thriftd: %v", err)
		}
	})
	return d.addr().String()
}

// TestConformance runs the backend-neutral Thrift API suite against thriftd.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Target{Start: thriftdTarget})
}
