package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestStartUpOfAFilledStore fills a store through a real thriftd with a
// load run that keeps its keyspace, times thriftd's start-up on it, and
// checks that every start answered and that the keyspace was kept, with
// the super rows get-super preloaded and read. A keyspace made without
// PreloadedSupers gets it with --reuse.
func TestStartUpOfAFilledStore(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir+"/", "../thriftd").CombinedOutput(); err != nil {
		t.Fatalf("build thriftd: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "thriftd")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	p, err := startThriftd(ctx, nil, bin, nil, dir, 10*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--addr", p.addr, "--mode", "insert,batch-super,counter,get-super", "--keep",
		"--duration", "300ms", "--warmup", "0", "--connections", "2", "--keys", "50", "--preload", "20", "--json", "--log-level", "info")
	p.stop(log)
	if code != exitOK || !strings.Contains(stderr, "kept keyspace") || strings.Contains(stderr, "dropped keyspace") {
		t.Fatalf("load with --keep: exit %d\nstderr: %s", code, stderr)
	}
	// Only get-super reads preloaded rows: the super rows were preloaded,
	// the standard ones were not.
	if !strings.Contains(stderr, "family=PreloadedSupers rows=20 super_columns=10 subcolumns=10") || strings.Contains(stderr, "family=Preloaded ") {
		t.Errorf("preload of get-super alone:\n%s", stderr)
	}
	checkGetSuper(t, stdout, "load with --keep")

	data := filepath.Join(dir, "thriftd-data")
	code, stdout, stderr = runCLI(t, "start-up", "--thriftd", bin, "--data-dir", data, "--starts", "2", "--log-level", "warn")
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
	p, err = startThriftd(ctx, nil, bin, nil, dir, 10*time.Second, log)
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
	checkPreloadedSubcolumn(ctx, t, c)
	checkReuseAddsPreloadedSupers(ctx, t, c, p.addr)

	// A directory that is not there is refused, named.
	missing := filepath.Join(dir, "missing")
	code, _, stderr = runCLI(t, "start-up", "--thriftd", bin, "--data-dir", missing)
	if code != exitFailed || !strings.Contains(stderr, missing) {
		t.Errorf("start-up of %s: exit %d, stderr %q", missing, code, stderr)
	}
}

// checkGetSuper checks the get-super result of a --json report: calls
// made, one cell each, none failed.
func checkGetSuper(t *testing.T, stdout, what string) {
	t.Helper()
	var rep report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%s: --json output: %v\n%s", what, err, stdout)
	}
	for _, m := range rep.Modes {
		if m.Mode != "get-super" {
			continue
		}
		if m.Ops == 0 || m.Cells != m.Ops || m.Errors != 0 || m.FirstError != "" {
			t.Errorf("%s: get-super made %d calls of %d cells, %d failed (%s)", what, m.Ops, m.Cells, m.Errors, m.FirstError)
		}
		return
	}
	t.Errorf("%s: no get-super in the report: %s", what, stdout)
}

// checkPreloadedSubcolumn reads a preloaded subcolumn of the kept
// keyspace as get-super does: the answer is that subcolumn, with the
// value of the run's seed; the standard rows no mode read are not there.
func checkPreloadedSubcolumn(ctx context.Context, t *testing.T, c *client) {
	t.Helper()
	if err := c.SetKeyspace(ctx, "thriftbench"); err != nil {
		t.Fatal(err)
	}
	path := &cassandra.ColumnPath{ColumnFamily: cfPreloadedSupers, SuperColumn: superName(9), Column: columnName(9)}
	cosc, err := c.Get(ctx, preloadedKey(19), path, cl)
	if err != nil {
		t.Fatalf("get of a preloaded subcolumn: %v", describeErr(err))
	}
	value := newParams(&loadConfig{ValueSize: 64, Values: valuesRepeat, Seed: 1}).values
	if col := cosc.Column; col == nil || !bytes.Equal(col.Name, columnName(9)) || !bytes.Equal(col.Value, value) || cosc.SuperColumn != nil {
		t.Errorf("get of a preloaded subcolumn answered %+v", cosc)
	}
	var nfe *cassandra.NotFoundException
	_, err = c.Get(ctx, preloadedKey(0), &cassandra.ColumnPath{ColumnFamily: cfPreloaded, Column: columnName(0)}, cl)
	if !errors.As(err, &nfe) {
		t.Errorf("a standard row no mode read: %v, want not found", err)
	}
}

// checkReuseAddsPreloadedSupers creates a keyspace of thriftbench's
// families but PreloadedSupers, as runs made before get-super left them,
// and runs get-super in it with --reuse: the family is added, its rows
// preloaded and read.
func checkReuseAddsPreloadedSupers(ctx context.Context, t *testing.T, c *client, addr string) {
	t.Helper()
	const keyspace = "oldbench"
	old := newTarget("old", addr, &loadConfig{Keyspace: keyspace}, slog.New(slog.DiscardHandler))
	ks := cassandra.NewKsDef()
	ks.Name, ks.StrategyClass = keyspace, "org.apache.cassandra.locator.SimpleStrategy"
	ks.StrategyOptions = map[string]string{"replication_factor": "1"}
	for _, cf := range old.families() {
		if cf.Name != cfPreloadedSupers {
			ks.CfDefs = append(ks.CfDefs, cf)
		}
	}
	if _, err := c.SystemAddKeyspace(ctx, ks); err != nil {
		t.Fatalf("create %s: %v", keyspace, describeErr(err))
	}
	code, stdout, stderr := runCLI(t, "--addr", addr, "--keyspace", keyspace, "--reuse", "--mode", "get-super",
		"--preload", "5", "--super-columns", "2", "--subcolumns", "3", "--duration", "300ms", "--warmup", "0",
		"--connections", "2", "--json", "--log-level", "info")
	if code != exitOK || !strings.Contains(stderr, "reusing keyspace") {
		t.Fatalf("get-super with --reuse of %s: exit %d\nstderr: %s", keyspace, code, stderr)
	}
	checkGetSuper(t, stdout, "--reuse")
	got, err := c.DescribeKeyspace(ctx, keyspace)
	if err != nil {
		t.Fatal(describeErr(err))
	}
	for _, cf := range got.CfDefs {
		if cf.Name == cfPreloadedSupers {
			if cf.ColumnType != "Super" || cf.GetComment() != familyComment {
				t.Errorf("%s added as %+v", cfPreloadedSupers, cf)
			}
			return
		}
	}
	t.Errorf("--reuse did not add %s to %s: %d families", cfPreloadedSupers, keyspace, len(got.CfDefs))
}
