package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Shape of the wide row of the memory test.
const (
	wideKeyspace  = "Wide"
	wideCells     = 1_000_000
	wideBatch     = 10_000
	wideRSSLimit  = 256 << 20
	wideValueSize = 40
	wideLoaders   = 2
)

// loadWideRow writes one row of wideCells cells (LongType names, 40-byte
// BytesType values, every tenth cell with a TTL) into the family Series,
// wideBatch cells per batch_mutate, over wideLoaders connections at once:
// under the race detector, encoding and decoding the batches is most of
// the load's time, and the connections share it out among the CPUs.
func loadWideRow(t *testing.T, addr string) {
	t.Helper()
	createKeyspace(t, dialThrift(t, addr), wideKeyspace, familyDef{name: "Series", comparator: "LongType", validator: "BytesType"})
	value := bytes.Repeat([]byte{0xab}, wideValueSize)
	var g errgroup.Group
	for w := range wideLoaders {
		client := dialThrift(t, addr)
		if err := client.SetKeyspace(context.Background(), wideKeyspace); err != nil {
			t.Fatal(err)
		}
		g.Go(func() error {
			for first := w * wideBatch; first < wideCells; first += wideLoaders * wideBatch {
				muts := make([]*cassandra.Mutation, 0, wideBatch)
				for c := first; c < min(first+wideBatch, wideCells); c++ {
					ttl := int32(0)
					if c%10 == 0 {
						ttl = 30 * 24 * 3600
					}
					muts = append(muts, columnMutation(longName(int64(c)), value, int64(dataEpoch)*1_000_000+int64(c), ttl))
				}
				batch := map[string]map[string][]*cassandra.Mutation{"wide": {"Series": muts}}
				if err := client.BatchMutate(context.Background(), batch, cassandra.ConsistencyLevel_ONE); err != nil {
					return fmt.Errorf("batch_mutate of cells %d to %d: %w", first, first+len(muts)-1, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestWideRowMemoryRSS converts a row of a million cells, read from thriftd, to a
// script in a child convert process and checks the child's peak resident
// set size, VmHWM as the child reads it just before it exits: a wide row is
// streamed, never held whole. (The ru_maxrss of the child that the parent
// gets from wait4 would not do: Go starts a child with vfork, and Linux
// carries the high-water mark of the memory the child shared with its
// parent before exec, here the parent's thriftd, into the child's.)
func TestWideRowMemoryRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and converts a million cells")
	}
	addr := startThriftd(t)
	loadStart := time.Now()
	loadWideRow(t, addr)
	loaded := time.Since(loadStart)

	dir := t.TempDir()
	script, report := filepath.Join(dir, "wide.cql"), filepath.Join(dir, "report.json")
	convStart := time.Now()
	child := runConvert(t, "data", "--from", "thrift://"+addr+"/"+wideKeyspace, "--to", "file:"+script,
		"--quiet", "--now", strconv.FormatInt(dataNow.Unix(), 10), "--report", report, "--no-metadata")
	converted := time.Since(convStart)
	peak, err := childPeakRSS(child.stderr.String())
	if err != nil {
		t.Fatal(err)
	}

	var rep migrate.Report
	readJSON(t, report, &rep)
	if len(rep.Families) != 1 || rep.Cells != wideCells || rep.Families[0].Rows != 1 || rep.Families[0].TTLCells != wideCells/10 {
		t.Fatalf("report: %d cells, families %+v; want %d cells in one row", rep.Cells, rep.Families, wideCells)
	}
	inserts := countLines(t, script, []byte("INSERT "))
	if inserts != wideCells {
		t.Errorf("the script has %d INSERTs, want %d", inserts, wideCells)
	}
	t.Logf("1M-cell row: loaded in %v, converted in %v (%.0f cells/s), %d MB of script; child peak RSS %d MB",
		loaded.Round(time.Millisecond), converted.Round(time.Millisecond), float64(wideCells)/converted.Seconds(), fileSize(script)>>20, peak>>20)
	if peak <= 0 || peak >= wideRSSLimit {
		t.Errorf("convert's peak RSS was %d MB converting a 1M-cell row; want under %d MB", peak>>20, wideRSSLimit>>20)
	}
}

// childPeakRSS reads the peak RSS a child reported on its stderr.
func childPeakRSS(stderr string) (int64, error) {
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, childPeakPrefix+"VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("child's peak RSS line %q: %w", line, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("the child did not report its peak RSS (no /proc/self/status?); stderr:\n%s", stderr)
}

// countLines counts the lines of the file at path that start with prefix.
func countLines(t *testing.T, path string, prefix []byte) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), prefix) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(fmt.Errorf("read %s: %w", path, err))
	}
	return n
}
