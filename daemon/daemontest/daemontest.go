// Package daemontest runs thriftd in process for tests, through
// daemon.Start like cmd/thriftd.
package daemontest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/daemon"
)

// stopTimeout bounds the graceful stop at the end of a test.
const stopTimeout = 30 * time.Second

// Config returns the default settings of thriftd for a test: listening on
// 127.0.0.1:0, over a fresh directory that tb removes when it ends.
func Config(tb testing.TB) daemon.Config {
	cfg := daemon.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = tb.TempDir()
	return cfg
}

// Start starts thriftd with cfg and opts, logging nowhere, and stops it
// when tb ends (reporting a failed stop as an error of tb). It returns the
// address the server listens on.
func Start(tb testing.TB, cfg daemon.Config, opts ...daemon.Option) string {
	tb.Helper()
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		tb.Fatalf("start thriftd: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			tb.Errorf("stop thriftd: %v", err)
		}
	})
	return d.Addr().String()
}
