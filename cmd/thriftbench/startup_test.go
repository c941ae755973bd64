package main

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStartUpOfAFilledStore fills a store through a real thriftd with a
// load run that keeps its keyspace, times thriftd's start-up on it, and
// checks that every start answered and that the keyspace was kept.
func TestStartUpOfAFilledStore(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir+"/", "../thriftd").CombinedOutput(); err != nil {
		t.Fatalf("build thriftd: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "thriftd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	p, err := startThriftd(ctx, bin, nil, dir, 10*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "--addr", p.addr, "--mode", "insert,batch-super,counter", "--keep",
		"--duration", "300ms", "--warmup", "0", "--connections", "2", "--keys", "50", "--log-level", "info")
	p.stop(log)
	if code != exitOK || !strings.Contains(stderr, "kept keyspace") || strings.Contains(stderr, "dropped keyspace") {
		t.Fatalf("load with --keep: exit %d\nstderr: %s", code, stderr)
	}

	data := filepath.Join(dir, "thriftd-data")
	code, stdout, stderr := runCLI(t, "start-up", "--thriftd", bin, "--data-dir", data, "--starts", "2", "--log-level", "warn")
	if code != exitOK {
		t.Fatalf("start-up: exit %d\nstderr: %s", code, stderr)
	}
	for _, want := range []string{
		`(?m)^data directory .*thriftd-data: [0-9.]+ (MiB|GiB) in [1-9][0-9]* files$`,
		`(?m)^start 1: answered after [0-9]+ ms, VmRSS [1-9][0-9.]* MiB$`,
		`(?m)^start 2: answered after [0-9]+ ms, VmRSS [1-9][0-9.]* MiB$`,
		`(?m)^fastest [0-9]+ ms, slowest [0-9]+ ms$`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("start-up output lacks %s:\n%s", want, stdout)
		}
	}

	// The load's keyspace is still there, and a run may reuse it.
	p, err = startThriftd(ctx, bin, nil, dir, 10*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop(log)
	c, err := dial(ctx, p.addr, "", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ks, err := c.DescribeKeyspace(ctx, "thriftbench")
	if err != nil || len(ks.CfDefs) == 0 {
		t.Fatalf("the kept keyspace after the starts: %v, %v", ks, err)
	}

	// A directory that is not there is refused, named.
	missing := filepath.Join(dir, "missing")
	code, _, stderr = runCLI(t, "start-up", "--thriftd", bin, "--data-dir", missing)
	if code != exitFailed || !strings.Contains(stderr, missing) {
		t.Errorf("start-up of %s: exit %d, stderr %q", missing, code, stderr)
	}
}
