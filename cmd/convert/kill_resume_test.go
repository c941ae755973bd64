package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// childArgsEnv makes the test binary run convert's main itself, with these
// arguments (separated by newlines), so that a test can kill a real
// convert process or measure its memory.
const childArgsEnv = "CONVERT_TEST_CHILD_ARGS"

// childPeakPrefix starts the line a child that succeeded writes last to
// its stderr: its peak resident set size, the VmHWM line of
// /proc/self/status.
const childPeakPrefix = "convert child peak: "

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(childArgsEnv); ok {
		os.Args = append([]string{"convert"}, strings.Split(args, "\n")...)
		main() // exits by itself on an error
		if status, err := os.ReadFile("/proc/self/status"); err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(line, "VmHWM:") {
					fmt.Fprintln(os.Stderr, childPeakPrefix+line)
				}
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// convertChild is convert running in a child process.
type convertChild struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error // Wait's result, once done is closed
}

// startConvert runs convert with args in a child process.
func startConvert(t *testing.T, args ...string) *convertChild {
	t.Helper()
	c := &convertChild{done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^$")
	c.cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\n"))
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait waits for the child to exit, at most timeout.
func (c *convertChild) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(timeout):
		t.Fatalf("convert child still running after %v\nstderr: %s", timeout, c.stderr.String())
		return nil
	}
}

// runConvert runs convert with args in a child process to completion.
func runConvert(t *testing.T, args ...string) *convertChild {
	t.Helper()
	c := startConvert(t, args...)
	if err := c.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("convert %s: %v\nstderr: %s", strings.Join(args, " "), err, c.stderr.String())
	}
	return c
}

// Shape of the kill-and-resume keyspace: each family has more rows than a
// checkpoint's default 10,000, so that a run killed inside a family can
// resume inside it.
const (
	resumeKeyspace    = "Resume"
	resumeEventRows   = 25_000
	resumeEventCells  = 4
	resumeCommentRows = 3_000
	resumeHitRows     = 12_000
	resumeHitCounters = 3
)

// loadResumeKeyspace writes, through batch_mutate: a Standard family
// Events (every fifth cell with a TTL), a Super family Comments and a
// counter family Hits whose every counter is the sum of two increments.
// It returns the number of cells and of counters.
func loadResumeKeyspace(t *testing.T, addr string) (cells, counters int) {
	t.Helper()
	client := dialThrift(t, addr)
	createKeyspace(t, client, resumeKeyspace,
		familyDef{name: "Events", comparator: "LongType", validator: "UTF8Type"},
		familyDef{name: "Comments", comparator: "LongType", subcomparator: "UTF8Type", validator: "UTF8Type"},
		familyDef{name: "Hits", comparator: "UTF8Type", validator: "CounterColumnType"})
	l := newBatchLoader(t, client, 10_000)
	for r := 0; r < resumeEventRows; r++ {
		key := fmt.Sprintf("sensor-%05d", r)
		for c := 0; c < resumeEventCells; c++ {
			ttl := int32(0)
			if (r+c)%5 == 0 {
				ttl = 7 * 24 * 3600
			}
			ts := int64(dataEpoch)*1_000_000 + int64(r*resumeEventCells+c)
			l.add(key, "Events", columnMutation(longName(int64(c)), fmt.Appendf(nil, "%s says it's %d°", key, r%40+c), ts, ttl))
			cells++
		}
	}
	for r := 0; r < resumeCommentRows; r++ {
		key := fmt.Sprintf("article-%04d", r)
		for s := 0; s < 2; s++ {
			ts := int64(dataEpoch)*1_000_000 + int64(r)
			cols := []*cassandra.Column{
				{Name: []byte("author"), Value: fmt.Appendf(nil, "user%d", (r*7+s)%101), Timestamp: &ts},
				{Name: []byte("body"), Value: fmt.Appendf(nil, "comment %d\non article %d", s, r), Timestamp: &ts},
				{Name: []byte("score"), Value: []byte(strconv.Itoa(r % 11)), Timestamp: &ts},
			}
			l.add(key, "Comments", superMutation(longName(int64(s)), cols...))
			cells += len(cols)
		}
	}
	for pass := 0; pass < 2; pass++ {
		for r := 0; r < resumeHitRows; r++ {
			key := fmt.Sprintf("page-%05d", r)
			for c := 0; c < resumeHitCounters; c++ {
				l.add(key, "Hits", counterMutation(fmt.Appendf(nil, "2024-%02d", c+1), int64(r%97+c+pass*1000)))
			}
		}
		l.flush()
	}
	counters = resumeHitRows * resumeHitCounters
	return cells + counters, counters
}

// TestKillAndResume converts a keyspace from thriftd to a script in a
// child convert process, SIGKILLs it at several points of its output
// (10%, 40% and 80% of an uninterrupted run's script, then inside the
// counter family past its first checkpoint), restarts it with
// the same --checkpoint until it finishes, and checks that the script is
// byte for byte the uninterrupted run's, and that verify finds every cell
// (counters, which add up, exactly once).
func TestKillAndResume(t *testing.T) {
	addr := startThriftd(t)
	cells, counters := loadResumeKeyspace(t, addr)
	dir := t.TempDir()
	now := strconv.FormatInt(dataNow.Unix(), 10)
	from := "thrift://" + addr + "/" + resumeKeyspace

	full := filepath.Join(dir, "full.cql")
	started := time.Now()
	runConvert(t, "data", "--from", from, "--to", "file:"+full, "--quiet", "--now", now)
	t.Logf("uninterrupted run: %v", time.Since(started).Round(time.Millisecond))
	want, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}

	script, checkpoint := filepath.Join(dir, "out.cql"), filepath.Join(dir, "ck.json")
	args := []string{"data", "--from", from, "--to", "file:" + script, "--quiet", "--now", now, "--checkpoint", checkpoint}
	// Kill points: shares of the script, then inside the counter family,
	// past its first checkpoint (after 10,000 rows): the run resumes in
	// the middle of the increments.
	points := []int64{int64(0.10 * float64(len(want))), int64(0.40 * float64(len(want))), int64(0.80 * float64(len(want)))}
	if at := counterOffset(want, 11_000*resumeHitCounters); at > points[len(points)-1] {
		points = append(points, at)
	} else {
		t.Errorf("the counter family's 11,000th row is at byte %d of %d, not past 80%% of the script", at, len(want))
	}
	kills := 0
	for _, at := range points {
		child := startConvert(t, args...)
		if !killAtSize(t, child, script, at) {
			t.Logf("the run meant to be killed at byte %d finished first", at)
			continue
		}
		kills++
		ck, err := migrate.LoadCheckpoint(checkpoint)
		if err != nil {
			t.Fatalf("checkpoint after the kill at byte %d: %v", at, err)
		}
		t.Logf("killed at byte %d (%.0f%%, %d bytes written): %s", at, 100*float64(at)/float64(len(want)), fileSize(script), describeCheckpoint(ck))
	}
	if kills == 0 {
		t.Fatal("no run was interrupted: every run finished before its kill point")
	}
	for attempt := 0; ; attempt++ {
		if attempt == 3 {
			t.Fatal("the resumed conversion did not finish in 3 runs")
		}
		child := startConvert(t, args...)
		err := child.wait(t, 2*time.Minute)
		if err == nil {
			break
		}
		t.Logf("resumed run %d: %v\nstderr: %s", attempt+1, err, child.stderr.String())
	}

	got, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("after %d kills the script differs from the uninterrupted run's (%d bytes vs %d): %s",
			kills, len(got), len(want), scriptDifference(got, want))
	}
	if n := bytes.Count(got, []byte("\nUPDATE ")); n != counters {
		t.Errorf("the script has %d counter increments, the source %d counters", n, counters)
	}

	out, err := convert(t, "verify", "--from", from, "--to", "file:"+script, "--now", now)
	if err != nil {
		t.Fatalf("verify the resumed script: %v\n%s", err, out)
	}
	if !strings.Contains(out, fmt.Sprintf("OK: %d cells match", cells)) {
		t.Fatalf("verify the resumed script, %d cells expected:\n%s", cells, out)
	}
}

// killAtSize SIGKILLs child once the file at path holds at least size
// bytes, polling it; it reports false if the child exited first.
func killAtSize(t *testing.T, child *convertChild, path string, size int64) bool {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for fileSize(path) < size {
		select {
		case <-child.done:
			if child.err != nil {
				t.Fatalf("convert failed before its kill point: %v\nstderr: %s", child.err, child.stderr.String())
			}
			return false
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script did not reach %d bytes in 2 minutes", size)
		}
	}
	if err := child.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := child.wait(t, time.Minute)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		// It finished between the size check and the signal.
		if err != nil {
			t.Fatalf("convert: %v\nstderr: %s", err, child.stderr.String())
		}
		return false
	}
	return true
}

// counterOffset is the offset just past the n-th counter increment of
// script, or its length if it has fewer.
func counterOffset(script []byte, n int) int64 {
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.Index(script[off:], []byte("\nUPDATE "))
		if j < 0 {
			return int64(len(script))
		}
		off += j + 1
	}
	if end := bytes.IndexByte(script[off:], '\n'); end >= 0 {
		return int64(off + end + 1)
	}
	return int64(len(script))
}

// describeCheckpoint summarises a checkpoint: where each family stands.
func describeCheckpoint(ck *migrate.Checkpoint) string {
	if ck == nil {
		return "no checkpoint yet"
	}
	var parts []string
	for _, name := range []string{"Events", "Comments", "Hits"} {
		fc := ck.Families[name]
		switch {
		case fc == nil:
			parts = append(parts, name+" not started")
		case fc.Done:
			parts = append(parts, name+" done")
		default:
			parts = append(parts, fmt.Sprintf("%s at row %d", name, fc.Stats.Rows))
		}
	}
	return fmt.Sprintf("checkpoint at byte %d: %s", ck.SinkOffset, strings.Join(parts, ", "))
}

// scriptDifference describes the first line where got and want differ.
func scriptDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is\n  %q\nnot\n  %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("one is a prefix of the other (%d and %d lines)", len(g), len(w))
}
