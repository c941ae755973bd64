package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// startThriftd starts thriftd in-process on 127.0.0.1:0 over a Badger
// store in a temporary directory, its clock stopped at the start; it stops
// when the test or benchmark ends.
func startThriftd(tb testing.TB) string {
	tb.Helper()
	ctx := context.Background()
	s, err := startFixtureServer(ctx, tb.TempDir(), time.Now(), slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.stop(ctx); err != nil {
			tb.Error(err)
		}
	})
	return s.addr()
}

// dialThrift opens a framed binary-protocol client to addr, closed when
// the test ends.
func dialThrift(tb testing.TB, addr string) *cassandra.CassandraClient {
	tb.Helper()
	conf := &thrift.TConfiguration{ConnectTimeout: 5 * time.Second, SocketTimeout: 60 * time.Second}
	tr := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(addr, conf), conf)
	if err := tr.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tr.Close() })
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	return cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr)))
}

// familyDef describes a column family for system_add_keyspace.
type familyDef struct {
	name, comparator, subcomparator, validator string
}

// createKeyspace creates keyspace with families (UTF8Type row keys) and
// selects it on client.
func createKeyspace(tb testing.TB, client *cassandra.CassandraClient, keyspace string, families ...familyDef) {
	tb.Helper()
	ctx := context.Background()
	ks := &cassandra.KsDef{Name: keyspace, StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{}}
	for _, f := range families {
		cf := cassandra.NewCfDef()
		cf.Keyspace, cf.Name, cf.ComparatorType = keyspace, f.name, f.comparator
		keyType, validator := "UTF8Type", f.validator
		cf.KeyValidationClass, cf.DefaultValidationClass = &keyType, &validator
		if f.subcomparator != "" {
			sub := f.subcomparator
			cf.ColumnType, cf.SubcomparatorType = "Super", &sub
		}
		ks.CfDefs = append(ks.CfDefs, cf)
	}
	if _, err := client.SystemAddKeyspace(ctx, ks); err != nil {
		tb.Fatalf("system_add_keyspace %s: %v", keyspace, err)
	}
	if err := client.SetKeyspace(ctx, keyspace); err != nil {
		tb.Fatalf("set_keyspace %s: %v", keyspace, err)
	}
}

// batchLoader accumulates mutations and sends them with batch_mutate
// once about limit of them are pending.
type batchLoader struct {
	tb      testing.TB
	client  *cassandra.CassandraClient
	limit   int
	pending int
	batch   map[string]map[string][]*cassandra.Mutation
}

func newBatchLoader(tb testing.TB, client *cassandra.CassandraClient, limit int) *batchLoader {
	return &batchLoader{tb: tb, client: client, limit: limit, batch: map[string]map[string][]*cassandra.Mutation{}}
}

func (l *batchLoader) add(key, family string, m ...*cassandra.Mutation) {
	row := l.batch[key]
	if row == nil {
		row = map[string][]*cassandra.Mutation{}
		l.batch[key] = row
	}
	row[family] = append(row[family], m...)
	l.pending += len(m)
	if l.pending >= l.limit {
		l.flush()
	}
}

func (l *batchLoader) flush() {
	l.tb.Helper()
	if l.pending == 0 {
		return
	}
	if err := l.client.BatchMutate(context.Background(), l.batch, cassandra.ConsistencyLevel_ONE); err != nil {
		l.tb.Fatalf("batch_mutate: %v", err)
	}
	l.batch, l.pending = map[string]map[string][]*cassandra.Mutation{}, 0
}

func columnMutation(name, value []byte, timestamp int64, ttl int32) *cassandra.Mutation {
	col := &cassandra.Column{Name: name, Value: value, Timestamp: &timestamp}
	if ttl > 0 {
		col.TTL = &ttl
	}
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: col}}
}

func superMutation(super []byte, cols ...*cassandra.Column) *cassandra.Mutation {
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
		SuperColumn: &cassandra.SuperColumn{Name: super, Columns: cols}}}
}

func counterMutation(name []byte, delta int64) *cassandra.Mutation {
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
		CounterColumn: &cassandra.CounterColumn{Name: name, Value: delta}}}
}

func longName(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// dataEpoch is the writetime base of generated cells, in seconds; cells
// are written with microsecond timestamps after it.
const dataEpoch = 1_700_000_000

// dataNow is the clock conversions of generated data run at: an hour
// after dataEpoch, so that a TTL'd cell has its TTL minus about an hour
// left, whenever the test runs.
var dataNow = time.Unix(dataEpoch+3600, 0)

// Shape of the benchmark keyspace.
const (
	benchKeyspace     = "Bench"
	benchRows         = 2000
	benchCellsPerRow  = 100
	benchSuperRows    = 500
	benchSupersPerRow = 20
	benchSubsPerSuper = 10
	benchTTL          = 30 * 24 * 3600
)

// loadBenchKeyspace writes the benchmark keyspace through batch_mutate: a
// Standard family Events (LongType names, UTF8Type values, every tenth
// cell with a TTL) and a Super family Comments (LongType super column
// names, UTF8Type subcolumn names and values, every seventh subcolumn
// with a TTL). It returns the number of cells written.
func loadBenchKeyspace(tb testing.TB, addr string) int64 {
	tb.Helper()
	client := dialThrift(tb, addr)
	createKeyspace(tb, client, benchKeyspace,
		familyDef{name: "Events", comparator: "LongType", validator: "UTF8Type"},
		familyDef{name: "Comments", comparator: "LongType", subcomparator: "UTF8Type", validator: "UTF8Type"})
	l := newBatchLoader(tb, client, 10_000)
	var cells int64
	for r := 0; r < benchRows; r++ {
		key := fmt.Sprintf("device-%05d", r)
		for c := 0; c < benchCellsPerRow; c++ {
			ttl := int32(0)
			if c%10 == 0 {
				ttl = benchTTL
			}
			ts := int64(dataEpoch)*1_000_000 + int64(r*benchCellsPerRow+c)
			value := fmt.Appendf(nil, "reading %d of %s: ok", c, key)
			l.add(key, "Events", columnMutation(longName(int64(1_600_000_000_000+c)), value, ts, ttl))
			cells++
		}
	}
	for r := 0; r < benchSuperRows; r++ {
		key := fmt.Sprintf("post-%05d", r)
		for s := 0; s < benchSupersPerRow; s++ {
			cols := make([]*cassandra.Column, benchSubsPerSuper)
			for c := range cols {
				ts := int64(dataEpoch)*1_000_000 + int64(s*benchSubsPerSuper+c)
				cols[c] = &cassandra.Column{Name: fmt.Appendf(nil, "field-%02d", c), Value: fmt.Appendf(nil, "comment %d/%d on %s", s, c, key), Timestamp: &ts}
				if (s*benchSubsPerSuper+c)%7 == 0 {
					ttl := int32(benchTTL)
					cols[c].TTL = &ttl
				}
			}
			l.add(key, "Comments", superMutation(longName(int64(s)), cols...))
			cells += int64(len(cols))
		}
	}
	l.flush()
	return cells
}

// goalCellsPerSecond is the rate convert should reach from thriftd to a
// script on a 2-core machine.
const goalCellsPerSecond = 300_000

// BenchmarkThriftToFile measures `convert data` from thriftd to a .cql
// script: the pipeline thriftsource -> Convert -> FileSink, in cells per
// second, over a keyspace of a Standard and a Super family loaded through
// batch_mutate into an in-process thriftd.
//
// The ceiling, measured in the same run, is the read alone: the same
// families scanned through the same thriftsource, cells counted and
// dropped. That is the rate at which thriftd hands the data over to
// convert, which convert can never beat; the ratio is the share of it the
// whole command keeps once conversion and the script are added. (An
// in-memory source into the same FileSink would measure the converter
// alone, which migrate.BenchmarkConvertToFile already does; it cannot say
// how much the conversion costs relative to the read, which is where a
// live conversion spends its time.)
func BenchmarkThriftToFile(b *testing.B) {
	addr := startThriftd(b)
	cells := loadBenchKeyspace(b, addr)
	ctx := context.Background()
	b.Run("keyspace", func(b *testing.B) {
		dir := b.TempDir()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			rep := convertThriftToFile(b, ctx, addr, benchKeyspace, filepath.Join(dir, "bench.cql"))
			if rep.Cells != cells {
				b.Fatalf("converted %d cells, loaded %d", rep.Cells, cells)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()

		cstart := time.Now()
		for i := 0; i < b.N; i++ {
			if n := readOnly(b, ctx, addr, benchKeyspace, []string{"Events", "Comments"}); n != cells {
				b.Fatalf("the read returned %d cells, loaded %d", n, cells)
			}
		}
		ceiling := time.Since(cstart)

		rate := float64(cells) * float64(b.N) / elapsed.Seconds()
		ceilRate := float64(cells) * float64(b.N) / ceiling.Seconds()
		b.ReportMetric(rate, "cells/s")
		b.ReportMetric(ceilRate, "ceiling-cells/s")
		b.ReportMetric(rate/ceilRate, "x-of-ceiling")
		b.ReportMetric(rate/goalCellsPerSecond, "x-of-goal")
	})
}

// convertThriftToFile runs the pipeline convert data runs, from the
// keyspace on the Thrift server at addr to a script at path.
func convertThriftToFile(b *testing.B, ctx context.Context, addr, keyspace, path string) *migrate.Report {
	src, err := thriftsource.Open(ctx, addr, keyspace, thriftsource.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	now := func() time.Time { return dataNow }
	sink, err := migrate.CreateFileSink(path, now)
	if err != nil {
		b.Fatal(err)
	}
	rep, err := migrate.Convert(ctx, src, sink, migrate.Options{Now: now})
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// readOnly reads every row of families through thriftsource, as the
// pipeline does, without converting or writing anything, and returns the
// number of cells read.
func readOnly(b *testing.B, ctx context.Context, addr, keyspace string, families []string) int64 {
	src, err := thriftsource.Open(ctx, addr, keyspace, thriftsource.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var cells int64
	for _, family := range families {
		err := src.Scan(ctx, family, migrate.Position{}, func(ch migrate.RowChunk) error {
			cells += int64(len(ch.Cells))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return cells
}

// fileSize is the size of the file at path, 0 if it does not exist.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
