package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/thriftbridge/thriftbridge/legacy"
)

// shutdownGrace bounds how long in-flight calls may take once a stop
// signal arrives.
const shutdownGrace = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "thriftd:", err)
		}
		os.Exit(2)
	}
}

// run parses the command line, starts thriftd and serves until ctx is
// cancelled, then stops gracefully.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("thriftd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var values legacy.ServerConfig
	flags := legacy.RegisterServerFlags(fs, &values)
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := flags.Resolve()
	if err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	d, err := startDaemon(ctx, cfg, logger)
	if err != nil {
		return err
	}
	select {
	case err = <-d.served:
		d.engine.Close()
		return err
	case <-ctx.Done():
	}
	logger.Info("stopping: finishing in-flight calls")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := d.stop(sctx); err != nil {
		return err
	}
	logger.Info("stopped cleanly")
	return nil
}
