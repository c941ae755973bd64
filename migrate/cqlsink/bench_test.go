package cqlsink

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"golang.org/x/sync/errgroup"

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
)

// benchNow is the clock of the benchmark's conversions: every tenth cell
// has a TTL and an hour of it is gone.
var benchNow = time.Unix(benchEpoch+3600, 0)

// benchSource generates rows of a Standard family Events (UTF8Type keys,
// LongType names, UTF8Type values) without holding them.
type benchSource struct{ rows int }

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
	for r := 0; r < s.rows; r++ {
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

// BenchmarkSinkVersusRawGocql writes the same rows twice into a fresh
// keyspace: through the sink (the pipeline from an in-memory source, as
// convert data runs it) and, in the same run, through gocql directly the
// way a hand-written loader would (one unlogged batch per partition,
// native Go values, the same number of batches in flight and the same
// consistency). It reports both rates in cells per second and the sink's
// share of the raw rate (the goal is at least 0.8).
func BenchmarkSinkVersusRawGocql(b *testing.B) {
	hosts := clusterHosts(b)
	ctx := context.Background()
	keyspace := fmt.Sprintf("thriftbridge_bench_%d", time.Now().UnixNano())
	sink, err := Connect(ctx, Config{Hosts: hosts, Keyspace: keyspace, Consistency: gocql.One,
		Concurrency: benchConcurrency, BatchSize: benchRowCells})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = sink.exec(ctx, "DROP KEYSPACE IF EXISTS "+keyspace)
		sink.Close()
	}()
	opts := migrate.Options{TargetKeyspace: keyspace, Now: func() time.Time { return benchNow }}
	schema, err := migrate.WriteSchema(ctx, &benchSource{rows: 1}, sink, opts)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := newSession(hosts, gocql.One, 30*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	insert, insertTTL := rawInsertTexts(schema.Tables[0])

	b.Run("rows", func(b *testing.B) {
		rows := b.N/benchRowCells + 1
		cells := float64(rows * benchRowCells)
		b.ResetTimer()
		start := time.Now()
		rep, err := migrate.Convert(ctx, &benchSource{rows: rows}, sink, opts)
		if err != nil {
			b.Fatal(err)
		}
		sinkTime := time.Since(start)
		b.StopTimer()
		if rep.Cells != int64(cells) {
			b.Fatalf("the sink wrote %d cells of %.0f", rep.Cells, cells)
		}

		rstart := time.Now()
		if err := writeRaw(ctx, raw, insert, insertTTL, rows); err != nil {
			b.Fatal(err)
		}
		rawTime := time.Since(rstart)

		sinkRate, rawRate := cells/sinkTime.Seconds(), cells/rawTime.Seconds()
		b.ReportMetric(sinkRate, "sink-cells/s")
		b.ReportMetric(rawRate, "raw-gocql-cells/s")
		b.ReportMetric(sinkRate/rawRate, "ratio-of-raw")
	})
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

// writeRaw writes rows through gocql: one unlogged batch per row,
// benchConcurrency batches in flight.
func writeRaw(ctx context.Context, session *gocql.Session, insert, insertTTL string, rows int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(benchConcurrency)
	for r := 0; r < rows; r++ {
		key, cells := benchRow(r)
		g.Go(func() error {
			batch := session.NewBatch(gocql.UnloggedBatch).WithContext(gctx)
			batch.SetConsistency(gocql.One)
			for _, c := range cells {
				if c.ttl > 0 {
					batch.Query(insertTTL, key, c.column, c.value, c.ttl, c.writetime)
				} else {
					batch.Query(insert, key, c.column, c.value, c.writetime)
				}
			}
			if err := session.ExecuteBatch(batch); err != nil {
				return fmt.Errorf("raw batch of row %s: %w", key, err)
			}
			return nil
		})
	}
	return g.Wait()
}
