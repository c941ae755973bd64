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

// runConvertCLI runs convert's main with args in a child process (TestMain
// in kill_resume_test.go) and returns its exit status and standard error.
func runConvertCLI(t *testing.T, args ...string) (int, string) {
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
	t.Fatalf("run convert %v: %v", args, err)
	return 0, ""
}

// TestCommandLineStrictness: a wrong command line (no command, an unknown
// command or flag, a missing or malformed flag, a stray argument) exits
// with status 2 and says what is wrong, with the usage where the mistake
// is the command's shape.
func TestCommandLineStrictness(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		says  []string
		usage bool // the usage is printed
	}{
		{"no command", nil, []string{"usage: convert"}, true},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`}, true},
		{"unknown flag", []string{"plan", "--no-such-flag"}, []string{"flag provided but not defined: -no-such-flag"}, true},
		{"help of a command", []string{"plan", "-h"}, []string{"usage: convert plan", "-from"}, true},
		{"missing --from", []string{"plan"}, []string{"--from is required"}, false},
		{"missing --to", []string{"data", "--from", "thrift://127.0.0.1:1/Blog"}, []string{"--to is required"}, false},
		{"unknown source", []string{"plan", "--from", "ftp://x"}, []string{`unknown source "ftp"`}, false},
		{"unknown target", []string{"data", "--from", "json:x", "--schema", "s", "--to", "mysql://x"}, []string{"expected cql://host:port/keyspace or file:OUT.cql"}, false},
		{"stray argument", []string{"plan", "--from", "json:x", "stray"}, []string{`unexpected argument "stray"`}, false},
		{"stray argument to fixtures", []string{"fixtures", "stray"}, []string{`unexpected argument "stray"`}, false},
		{"bad --ttl", []string{"data", "--from", "json:x", "--schema", "s", "--to", "file:x.cql", "--ttl", "forever"}, []string{"--ttl"}, false},
		{"bad --consistency", []string{"data", "--from", "json:x", "--schema", "s", "--to", "cql://127.0.0.1:1/ks", "--consistency", "MOST"}, []string{"--consistency"}, false},
		{"malformed thrift source", []string{"plan", "--from", "thrift://127.0.0.1:1"}, []string{"expected thrift://host:port/Keyspace"}, false},
		{"bad --now", []string{"data", "--from", "json:x", "--schema", "s", "--to", "file:x.cql", "--now", "yesterday"}, []string{"Unix seconds or an RFC 3339 time"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, stderr := runConvertCLI(t, c.args...)
			if status != 2 {
				t.Errorf("convert %v: exit %d, want 2; stderr %q", c.args, status, stderr)
			}
			for _, s := range c.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("convert %v: stderr %q does not say %q", c.args, stderr, s)
				}
			}
			if c.usage && !strings.Contains(stderr, "usage: convert") {
				t.Errorf("convert %v: no usage in %q", c.args, stderr)
			}
		})
	}
}

// TestFailureExitsOne: a command line that is right but whose work fails
// (here, a source that refuses the connection, or a schema file that is
// not there) exits with status 1, not the usage status 2, and says why;
// verify, like diff, keeps 1 for differences and answers 2 when it could
// not compare.
func TestFailureExitsOne(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		says string
		want int
	}{
		{"source unreachable", []string{"plan", "--from", "thrift://127.0.0.1:1/Blog"}, "--from thrift://127.0.0.1:1/Blog", 1},
		{"schema file missing", []string{"plan", "--from", "json:" + t.TempDir(), "--schema", "/nonexistent/schema.json"}, "--schema", 1},
		{"verify cannot compare", []string{"verify", "--from", "thrift://127.0.0.1:1/Blog", "--to", "file:/nonexistent/x.cql"}, "--from thrift://127.0.0.1:1/Blog", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, stderr := runConvertCLI(t, c.args...)
			if status != c.want {
				t.Errorf("convert %v: exit %d, want %d; stderr %q", c.args, status, c.want, stderr)
			}
			if !strings.Contains(stderr, c.says) || strings.Contains(stderr, "usage:") {
				t.Errorf("convert %v: stderr %q should say %q without the usage", c.args, stderr, c.says)
			}
		})
	}
}
