package cqlsink

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"golang.org/x/sync/errgroup"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// Shape of the benchmark's rows: every row is one partition of rowCells
// cells, written as one batch by both sides.
const (
	benchRowCells    = 50
	benchConcurrency = 8
	benchEpoch       = 1_700_000_000
	benchTTL         = 86400
	// benchRounds is how many phases each writer's rows are cut into.
	benchRounds = 6
)

// benchNow is the clock of the benchmark's conversions: every tenth cell
// has a TTL and an hour of it is gone.
var benchNow = time.Unix(benchEpoch+3600, 0)

// benchSource generates rows first to first+rows-1 of a Standard family
// Events (UTF8Type keys, LongType names, UTF8Type values) without holding
// them.
type benchSource struct{ first, rows int }

func (s *benchSource) Keyspace(context.Context) (supercol.KeyspaceDef, error) {
	return supercol.KeyspaceDef{Name: "Bench", Families: []supercol.FamilyDef{
		{Name: "Events", KeyValidator: "UTF8Type", Comparator: "LongType", DefaultValidator: "UTF8Type"},
	}}, nil
}

func (s *benchSource) Close() error { return nil }

func (s *benchSource) Scan(ctx context.Context, family string, from migrate.Position, visit func(migrate.RowChunk) error) error {
	if from.Started {
		return fmt.Errorf("benchSource does not resume")
	}
	cells := make([]migrate.Cell, benchRowCells)
	for r := s.first; r < s.first+s.rows; r++ {
		key, row := benchRow(r)
		for c := range cells {
			cells[c] = migrate.Cell{Name: binary.BigEndian.AppendUint64(nil, uint64(row[c].column)), Value: []byte(row[c].value), Timestamp: row[c].writetime}
			if row[c].ttl > 0 {
				cells[c].TTL, cells[c].ExpiresAt = benchTTL, benchEpoch+benchTTL
			}
		}
		if err := visit(migrate.RowChunk{Key: []byte(key), Cells: cells, Last: true}); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// benchCell is one generated cell as the raw writer binds it.
type benchCell struct {
	column    int64
	value     string
	writetime int64
	ttl       int // remaining at benchNow; 0: none
}

// benchRow generates row r: its key and cells, the same for both writers.
func benchRow(r int) (string, []benchCell) {
	key := fmt.Sprintf("sensor-%08d", r)
	cells := make([]benchCell, benchRowCells)
	for c := range cells {
		cells[c] = benchCell{column: int64(c), value: fmt.Sprintf("reading %d of %s", c, key),
			writetime: int64(benchEpoch)*1_000_000 + int64(r*benchRowCells+c)}
		if c%10 == 0 {
			cells[c].ttl = int(benchEpoch + benchTTL - benchNow.Unix())
		}
	}
	return key, cells
}

// BenchmarkSinkVersusRawGocql writes rows into a fresh keyspace of each
// test server two ways: through the sink (the pipeline from an in-memory
// source, as convert data runs it) and through gocql directly the way a
// hand-written loader would (one unlogged batch per partition, native Go
// values, the same number of batches in flight and the same consistency).
// The two alternate in the order sink, raw, raw, sink, sink, raw... (each
// writer's rows cut into benchRounds phases, each phase on rows not
// written before), so that a server warming up, compacting or serving
// other clients in the meantime weighs on both alike. It reports both
// rates in cells per second, the sink's share of the raw rate (the goal is
// at least 0.8), and the client's CPU time per cell of each.
//
// A sink phase is timed from its first Write to the end of its Convert:
// the per-run setup (reading the schema, sampling, CREATE ... IF NOT
// EXISTS) is a constant that a real conversion spreads over all its
// cells.
func BenchmarkSinkVersusRawGocql(b *testing.B) {
	for _, c := range testcluster.Require(b, "the gocql sink benchmark") {
		b.Run(c.Name, func(b *testing.B) { sinkVersusRawGocql(b, c.Hosts) })
	}
}

func sinkVersusRawGocql(b *testing.B, hosts []string) {
	ctx := context.Background()
	keyspace := testcluster.Keyspace("tb_bench")
	sink, err := Connect(ctx, Config{Hosts: hosts, Keyspace: keyspace, Consistency: gocql.One,
		Concurrency: benchConcurrency, BatchSize: benchRowCells})
	if err != nil {
		b.Fatal(testcluster.Explain(err))
	}
	defer func() {
		if err := sink.exec(ctx, "DROP KEYSPACE IF EXISTS "+keyspace); err != nil {
			b.Errorf("drop keyspace %s: %v", keyspace, err)
		}
		sink.Close()
	}()
	opts := migrate.Options{TargetKeyspace: keyspace, Now: func() time.Time { return benchNow }, NoMetadata: true}
	schema, err := migrate.WriteSchema(ctx, &benchSource{rows: 1}, sink, opts)
	if err != nil {
		b.Fatal(testcluster.Explain(err))
	}
	raw, err := newSession(hosts, gocql.One, 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	insert, insertTTL := rawInsertTexts(schema.Tables[0])

	next := 0 // the first row no phase has written yet
	b.Run("rows", func(b *testing.B) {
		b.StopTimer()
		rows := b.N/benchRowCells + 1
		var sinkTime, rawTime, sinkCPU, rawCPU time.Duration
		sinkPhase := func(n int) {
			ts := &timedSink{Sink: sink}
			b.StartTimer()
			rep, err := migrate.Convert(ctx, &benchSource{first: next, rows: n}, ts, opts)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			sinkTime += time.Since(ts.start)
			sinkCPU += cpuTime() - ts.cpu
			if rep.Cells != int64(n*benchRowCells) {
				b.Fatalf("the sink wrote %d cells of %d", rep.Cells, n*benchRowCells)
			}
			next += n
		}
		rawPhase := func(n int) {
			start, cpu := time.Now(), cpuTime()
			if err := writeRaw(ctx, raw, insert, insertTTL, next, n); err != nil {
				b.Fatal(err)
			}
			rawTime += time.Since(start)
			rawCPU += cpuTime() - cpu
			next += n
		}
		for i := range benchRounds {
			n := rows/benchRounds + btoi(i < rows%benchRounds)
			switch {
			case n == 0:
			case i%2 == 0:
				sinkPhase(n)
				rawPhase(n)
			default:
				rawPhase(n)
				sinkPhase(n)
			}
		}

		cells := float64(rows * benchRowCells)
		sinkRate, rawRate := cells/sinkTime.Seconds(), cells/rawTime.Seconds()
		b.ReportMetric(sinkRate, "sink-cells/s")
		b.ReportMetric(rawRate, "raw-gocql-cells/s")
		b.ReportMetric(sinkRate/rawRate, "x-of-raw-gocql")
		b.ReportMetric(float64(sinkCPU.Nanoseconds())/cells, "sink-cpu-ns/cell")
		b.ReportMetric(float64(rawCPU.Nanoseconds())/cells, "raw-cpu-ns/cell")
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// timedSink notes the time and the process's CPU time at its first Write.
type timedSink struct {
	*Sink
	start time.Time
	cpu   time.Duration
}

func (s *timedSink) Write(ctx context.Context, stmts []migrate.Statement) error {
	if s.start.IsZero() {
		s.start, s.cpu = time.Now(), cpuTime()
	}
	return s.Sink.Write(ctx, stmts)
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawInsertTexts are the INSERTs of a (key, column1, value) table, without
// and with a TTL.
func rawInsertTexts(t *supercol.Table) (insert, insertTTL string) {
	var names []string
	for _, c := range t.Columns {
		names = append(names, supercol.QuoteIdent(c.Name))
	}
	prefix := "INSERT INTO " + t.QualifiedName() + " (" + strings.Join(names, ", ") + ") VALUES (?, ?, ?) USING "
	return prefix + "TIMESTAMP ?", prefix + "TTL ? AND TIMESTAMP ?"
}

// writeRaw writes rows first to first+rows-1 through gocql: one unlogged
// batch per row, benchConcurrency batches in flight.
func writeRaw(ctx context.Context, session *gocql.Session, insert, insertTTL string, first, rows int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(benchConcurrency)
	for r := first; r < first+rows; r++ {
		key, cells := benchRow(r)
		g.Go(func() error {
			batch := session.Batch(gocql.UnloggedBatch).Consistency(gocql.One)
			for _, c := range cells {
				if c.ttl > 0 {
					batch.Query(insertTTL, key, c.column, c.value, c.ttl, c.writetime)
				} else {
					batch.Query(insert, key, c.column, c.value, c.writetime)
				}
			}
			if err := batch.ExecContext(gctx); err != nil {
				return fmt.Errorf("raw batch of row %s: %w", key, err)
			}
			return nil
		})
	}
	return g.Wait()
}
