package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runMain runs thriftd's main with args in a child process (TestMain in
// durability_test.go) and returns its exit status and standard error.
func runMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\n"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	}
	t.Fatalf("run thriftd %v: %v", args, err)
	return 0, ""
}

func TestCommandLine(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
		says   string
	}{
		{"stray subcommand", []string{"serve", "now"}, 2, `unexpected argument "serve"`},
		{"unknown flag", []string{"--no-such-flag"}, 2, "flag provided but not defined: -no-such-flag"},
		{"bad log level", []string{"--log-level", "loud"}, 2, "--log-level"},
		{"help", []string{"-h"}, 2, "-data-dir"},
		{"data directory is a file", []string{"--listen", "127.0.0.1:0", "--data-dir", "/dev/null"}, 1, "/dev/null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, stderr := runMain(t, c.args...)
			if status != c.status || !strings.Contains(stderr, c.says) {
				t.Errorf("thriftd %v: exit %d, stderr %q; want exit %d and %q", c.args, status, stderr, c.status, c.says)
			}
			if c.status == 2 && c.name != "help" && strings.Count(stderr, c.says) > 2 {
				t.Errorf("the error is repeated: %q", stderr)
			}
		})
	}
}

// TestDataDirInUse: a second thriftd on a data directory another one holds
// exits with status 1 and says so, instead of serving an empty database.
func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	startChild(t, "--data-dir", dir)
	status, stderr := runMain(t, "--listen", "127.0.0.1:0", "--data-dir", dir)
	if status != 1 || !strings.Contains(stderr, dir) || !strings.Contains(stderr, "lock") {
		t.Errorf("second thriftd on %s: exit %d, stderr %q; want exit 1 naming the directory and its lock", dir, status, stderr)
	}
}
