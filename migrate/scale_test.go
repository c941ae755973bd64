package migrate

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// synthSource generates rows of a Standard family (UTF8Type keys and
// names, BytesType values) without holding them: rows rows of cells cells
// each, delivered in chunks of chunk cells. Every tenth cell has a TTL.
type synthSource struct {
	rows, cells, chunk int
	// visited is called every 100,000 cells.
	visited func(cells int)
}

func (s *synthSource) Keyspace(ctx context.Context) (supercol.KeyspaceDef, error) {
	return supercol.KeyspaceDef{Name: "synth", Families: []supercol.FamilyDef{
		{Name: "wide", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "BytesType"},
	}}, nil
}

func (s *synthSource) Scan(ctx context.Context, family string, from Position, visit func(RowChunk) error) error {
	buf := make([]Cell, s.chunk)
	names := make([]byte, 0, s.chunk*16)
	value := []byte("0123456789abcdef0123456789abcdef")
	total := 0
	start := 0
	if from.Started {
		n, err := strconv.Atoi(string(from.AfterKey[len("row-"):]))
		if err != nil {
			return err
		}
		start = n + 1
	}
	for r := start; r < s.rows; r++ {
		key := []byte(fmt.Sprintf("row-%08d", r))
		for c := 0; c < s.cells; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(s.chunk, s.cells-c)
			names = names[:0]
			for i := 0; i < n; i++ {
				start := len(names)
				names = fmt.Appendf(names, "col-%08d", c+i)
				cell := Cell{Name: names[start:len(names):len(names)], Value: value, Timestamp: 1_600_000_000_000_000 + int64(c+i)}
				if (c+i)%10 == 0 {
					cell.TTL, cell.ExpiresAt = 86400, testNow.Unix()+3600
				}
				buf[i] = cell
			}
			c += n
			if err := visit(RowChunk{Key: key, Cells: buf[:n], Last: c == s.cells}); err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				total++
				if s.visited != nil && total%100_000 == 0 {
					s.visited(total)
				}
			}
		}
	}
	return nil
}

func (s *synthSource) Close() error { return nil }

// TestWideRowMemory streams a row of a million cells through the pipeline
// into a script and checks that the heap stays small: nothing holds the
// whole row.
func TestWideRowMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams a million cells")
	}
	var peak uint64
	var ms runtime.MemStats
	src := &synthSource{rows: 1, cells: 1_000_000, chunk: 1000, visited: func(int) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}}
	path := filepath.Join(t.TempDir(), "wide.cql")
	rep, err := convertToFile(t, src, path, Options{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cells != 1_000_000 || rep.Families[0].TTLCells != 100_000 || rep.Families[0].Rows != 1 {
		t.Fatalf("report %+v", rep.Families[0])
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1M-cell row: %d MB of script, peak heap in use %d MB", st.Size()>>20, peak>>20)
	if peak == 0 || peak > 64<<20 {
		t.Errorf("peak HeapInuse %d MB while streaming a 1M-cell row; want well under 256 MB (< 64 MB)", peak>>20)
	}
}

// BenchmarkConvertToFile converts b.N cells to a script and compares the
// rate with a ceiling measured in the same run: writing the same bytes,
// line by line, through a bufio.Writer to a file.
func BenchmarkConvertToFile(b *testing.B) {
	dir := b.TempDir()
	cellsPerRow := 100
	rows := b.N/cellsPerRow + 1
	src := &synthSource{rows: rows, cells: cellsPerRow, chunk: cellsPerRow}
	path := filepath.Join(dir, "bench.cql")
	sink, err := CreateFileSink(path, fixedClock)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	rep, err := Convert(context.Background(), src, sink, Options{Now: fixedClock, Families: []string{"wide"}})
	if err == nil {
		err = sink.Close()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	cells := rep.Cells
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}

	// Ceiling: the same number of bytes in the same number of lines.
	line := make([]byte, st.Size()/cells)
	for i := range line {
		line[i] = 'x'
	}
	line[len(line)-1] = '\n'
	f, err := os.Create(filepath.Join(dir, "ceiling.out"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cstart := time.Now()
	for i := int64(0); i < cells; i++ {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	ceiling := time.Since(cstart)
	f.Close()

	rate := float64(cells) / elapsed.Seconds()
	ceilRate := float64(cells) / ceiling.Seconds()
	b.ReportMetric(rate, "cells/s")
	b.ReportMetric(ceilRate, "ceiling-cells/s")
	b.ReportMetric(rate/ceilRate, "x-of-ceiling")
}
