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

	"github.com/thriftbridge/thriftbridge/daemon"
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
	var values daemon.Config
	flags := daemon.RegisterFlags(fs, &values)
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

	d, err := daemon.Start(ctx, cfg, logger)
	if err != nil {
		return err
	}
	stopped := false
	select {
	case <-d.Done():
		stopped = true // serving failed; Stop reports why
	case <-ctx.Done():
		logger.Info("stopping: finishing in-flight calls")
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := d.Stop(sctx); err != nil {
		return err
	}
	if stopped {
		return errors.New("the server stopped serving")
	}
	logger.Info("stopped cleanly")
	return nil
}
