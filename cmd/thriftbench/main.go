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
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1 // the run failed, or some measured calls did
	exitUsage  = 2 // bad command line
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // a second signal ends the process at once
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "echo-server":
			return runEchoCommand(ctx, args[1:], stdout, stderr)
		case "compare":
			return runCompareCommand(ctx, args[1:], stdout, stderr)
		case "start-up":
			return runStartupCommand(ctx, args[1:], stdout, stderr)
		}
	}
	return runLoadCommand(ctx, args, stdout, stderr)
}

// usageError is a bad command line: it is reported with the usage text
// and exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parseArgs parses args into fs, printing errors and the usage on stderr.
// It refuses positional arguments. ok is false when the command must stop
// with status code: 0 after -h, 2 after a bad command line.
func parseArgs(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		// The flag package has printed the error and the usage.
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return exitUsage, false
	}
	return 0, true
}

// exitFor maps a command's error to its exit status, printing it (and the
// usage text for a usage error) on stderr.
func exitFor(fs *flag.FlagSet, err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		fs.Usage()
		return exitUsage
	default:
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return exitFailed
	}
}

// newLogger returns the slog logger of --log-level, writing to stderr.
func newLogger(level string, stderr io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}
