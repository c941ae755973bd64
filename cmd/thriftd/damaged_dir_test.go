package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// startOrFail runs thriftd in a child process and returns either the
// address it listens on, or its exit status and standard error when it
// exits without listening.
func startOrFail(t *testing.T, args ...string) (cmd *exec.Cmd, addr string, status int, stderr func() string) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(append([]string{"--listen", "127.0.0.1:0"}, args...), "\n"))
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var mu sync.Mutex
	var logs strings.Builder
	stderr = func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	found := make(chan string, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return cmd, addr, 0, stderr
	case <-ended:
		err := cmd.Wait()
		var exit *exec.ExitError
		status := 0
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		}
		return cmd, "", status, stderr
	case <-time.After(30 * time.Second):
		t.Fatal("thriftd neither listened nor exited")
		return cmd, "", 0, stderr
	}
}

// startChildLogs runs thriftd in a child process and returns it with its
// address once it listens, and its log so far at any time.
func startChildLogs(t *testing.T, args ...string) (*exec.Cmd, string, func() string) {
	t.Helper()
	cmd, addr, status, logs := startOrFail(t, args...)
	if addr == "" {
		t.Fatalf("thriftd exited with status %d:\n%s", status, logs())
	}
	return cmd, addr, logs
}

// copyDir copies the regular files of dir into a new directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// filesWithSuffix lists the files of dir whose names end with suffix.
func filesWithSuffix(t *testing.T, dir, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), suffix) {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	return names
}

// TestDamagedDataDir: a data directory whose Badger files were damaged
// (a truncated table, value log or MANIFEST, a lost MANIFEST) makes
// thriftd exit with status 1 and a message naming the directory; it never
// serves the directory as an empty or partial database. If it starts,
// every row written must be there.
func TestDamagedDataDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	child, addr := startChild(t, "--data-dir", dir)
	c := dialTest(t, addr)
	createKeyspace(t, c, "dmg", cfDef("cf", "UTF8Type", false))
	const rows = 200
	big := strings.Repeat("v", 2<<20) // above Badger's value threshold: in the value log
	for i := range rows {
		value := fmt.Sprint(i)
		if i%50 == 0 {
			value = big
		}
		if err := c.Insert(ctx, []byte(fmt.Sprintf("row%03d", i)), &cassandra.ColumnParent{ColumnFamily: "cf"}, column("c", value, 1), one); err != nil {
			t.Fatal(err)
		}
	}
	stopChild(t, child)
	if len(filesWithSuffix(t, dir, ".sst")) == 0 || len(filesWithSuffix(t, dir, ".vlog")) == 0 {
		t.Fatalf("no table or value log to damage in %s", dir)
	}

	truncate := func(suffix string, keep func(size int64) int64) func(t *testing.T, d string) {
		return func(t *testing.T, d string) {
			for _, f := range filesWithSuffix(t, d, suffix) {
				st, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(f, keep(st.Size())); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	half := func(size int64) int64 { return size / 2 }
	cases := []struct {
		name   string
		damage func(t *testing.T, d string)
		// valueLog: the damage is to the value log, whose lost values
		// fail their reads (Badger keeps no index of it to check).
		valueLog bool
		// setAside: the directory holds what a crash leaves (a table its
		// MANIFEST does not list, an empty log): thriftd must start, and
		// log that it set the file aside.
		setAside string
	}{
		{name: "intact", damage: func(*testing.T, string) {}},
		{name: "table truncated", damage: truncate(".sst", half)},
		{name: "table emptied", damage: truncate(".sst", func(int64) int64 { return 0 })},
		{name: "value log truncated", damage: truncate(".vlog", half), valueLog: true},
		{name: "MANIFEST truncated", damage: truncate("MANIFEST", half)},
		{name: "MANIFEST emptied", damage: truncate("MANIFEST", func(int64) int64 { return 0 })},
		{name: "MANIFEST lost", damage: func(t *testing.T, d string) {
			if err := os.Remove(filepath.Join(d, "MANIFEST")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "compaction interrupted", setAside: "999999.sst", damage: func(t *testing.T, d string) {
			// An output the MANIFEST does not list yet, holding rows the
			// listed tables hold too: a copy of one of them.
			b, err := os.ReadFile(filesWithSuffix(t, d, ".sst")[0])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "999999.sst"), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "memtable log created, not sized", setAside: "00099.mem", damage: func(t *testing.T, d string) {
			if err := os.WriteFile(filepath.Join(d, "00099.mem"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "value log created, not sized", setAside: "000099.vlog", damage: func(t *testing.T, d string) {
			if err := os.WriteFile(filepath.Join(d, "000099.vlog"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "table lost", damage: func(t *testing.T, d string) {
			for _, f := range filesWithSuffix(t, d, ".sst") {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := copyDir(t, dir)
			tc.damage(t, d)
			_, addr, status, logs := startOrFail(t, "--data-dir", d)
			if tc.setAside != "" {
				set, _ := filepath.Glob(filepath.Join(d, "set-aside", "*", tc.setAside))
				if addr == "" || len(set) != 1 || !strings.Contains(logs(), "set aside what a crash left") {
					t.Fatalf("started: %v; %s set aside: %v; want both, and a warning:\n%s", addr != "", tc.setAside, set, logs())
				}
			}
			if addr == "" {
				if status != 1 || !strings.Contains(logs(), d) {
					t.Fatalf("exit %d; want 1 and a message naming %s:\n%s", status, d, logs())
				}
				t.Logf("refused: %s", lastLine(logs()))
				return
			}
			defer func() {
				if t.Failed() {
					t.Logf("thriftd's log:\n%s", logs())
				}
			}()
			// It started: then nothing may be missing.
			c := dialTest(t, addr)
			if err := c.SetKeyspace(ctx, "dmg"); err != nil {
				t.Fatalf("started on the damaged directory without the keyspace: %v", err)
			}
			failed := 0
			for i := range rows {
				got, err := c.Get(ctx, []byte(fmt.Sprintf("row%03d", i)), &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("c")}, one)
				var timedOut *cassandra.TimedOutException
				if tc.valueLog && i%50 == 0 && errors.As(err, &timedOut) {
					// A value lost with the value log fails its reads,
					// as a corrupt sstable fails Cassandra's.
					failed++
					continue
				}
				if err != nil {
					t.Fatalf("started on the damaged directory, but row%03d: %v", i, err)
				}
				if want := fmt.Sprint(i); i%50 != 0 && string(got.Column.Value) != want || i%50 == 0 && len(got.Column.Value) != len(big) {
					t.Fatalf("started on the damaged directory, but row%03d reads %d bytes", i, len(got.Column.Value))
				}
			}
			if failed > 0 && !strings.Contains(logs(), "Unable to read") {
				t.Errorf("%d reads failed, and the log does not say why", failed)
			}
			t.Logf("started; %d rows read as written, %d values of the value log unreadable, their reads failed", rows-failed, failed)
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
