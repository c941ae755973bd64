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
	// The first signal starts a graceful stop; the next one takes the
	// signal's default action and ends the process at once, so a stop
	// that cannot finish (a store that cannot flush) can still be ended
	// by a second Ctrl-C or a service manager's second SIGTERM.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Stderr)
	var usage usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case errors.As(err, &usage):
		if !usage.reported {
			fmt.Fprintln(os.Stderr, "thriftd:", err)
		}
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "thriftd:", err)
		os.Exit(1)
	}
}

// usageError is a wrong command line: thriftd exits with status 2 on it,
// and with status 1 when it cannot start or stops serving.
type usageError struct {
	err      error
	reported bool // the flag package has printed it with the usage
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// run parses the command line, starts thriftd and serves until ctx is
// cancelled, then stops gracefully.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	// --- Authentication: thriftd user add|passwd|del|list (user.go). ---
	if len(args) > 0 && args[0] == "user" {
		return runUser(ctx, args[1:], os.Stdin, os.Stdout, stderr)
	}
	// --- End of authentication. ---
	// --- Backups: thriftd backup|restore (backup.go). ---
	if len(args) > 0 && (args[0] == "backup" || args[0] == "restore") {
		return runBackupCommand(ctx, args[0], args[1:], os.Stdout, stderr)
	}
	// --- End of backups. ---
	fs := flag.NewFlagSet("thriftd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var values daemon.Config
	flags := daemon.RegisterFlags(fs, &values)
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, reported: true}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError{err: fmt.Errorf("unexpected argument %q: thriftd takes flags only", fs.Arg(0))}
	}
	cfg, err := flags.Resolve()
	if err != nil {
		return usageError{err: err}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageError{err: fmt.Errorf("--log-level: %w", err)}
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
		logger.Info("stopping: finishing in-flight calls (a second signal stops at once)")
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
