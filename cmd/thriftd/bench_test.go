package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// benchClients is how many connections drive the load, as a pool of
// application threads would.
const benchClients = 16

// Reference rates of Cassandra 3.11's Thrift server on this kind of
// machine (2 cores), measured with the same operations.
const (
	cassandraInsertsPerSec = 15000
	cassandraSlicesPerSec  = 4500
)

type benchRates struct {
	mu    sync.Mutex
	rates map[string]float64
}

func (r *benchRates) set(name string, v float64) {
	r.mu.Lock()
	r.rates[name] = v
	r.mu.Unlock()
}

// BenchmarkThriftd measures thriftd's throughput over loopback TCP with
// benchClients connections: single-column inserts and 100-column slices,
// against the ceiling of the same run — a Thrift call that does no work
// (describe_cluster_name) — and against Cassandra 3.11's reference rates.
func BenchmarkThriftd(b *testing.B) {
	cfg := legacy.DefaultServerConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = b.TempDir()
	d, err := startDaemon(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer d.stop(context.Background())
	addr := d.addr().String()
	setup := dialBench(b, addr)
	ctx := context.Background()
	if _, err := setup.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: "bench", StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{}}); err != nil {
		b.Fatal(err)
	}
	if err := setup.SetKeyspace(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name, cf.ComparatorType = "bench", "cf", "LongType"
	if _, err := setup.SystemAddColumnFamily(ctx, cf); err != nil {
		b.Fatal(err)
	}
	// One wide row of 100 columns for the slice benchmark.
	ts := int64(1)
	var muts []*cassandra.Mutation
	for i := 0; i < 100; i++ {
		muts = append(muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{
			Name: longName(int64(i)), Value: make([]byte, 32), Timestamp: &ts}}})
	}
	if err := setup.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{"wide": {"cf": muts}}, cassandra.ConsistencyLevel_ONE); err != nil {
		b.Fatal(err)
	}

	rates := &benchRates{rates: map[string]float64{}}
	var seq atomic.Int64
	ops := []struct {
		name string
		do   func(c *cassandra.CassandraClient) error
	}{
		{"noop-ceiling", func(c *cassandra.CassandraClient) error {
			_, err := c.DescribeClusterName(ctx)
			return err
		}},
		{"insert-1col", func(c *cassandra.CassandraClient) error {
			n := seq.Add(1)
			ts := n
			return c.Insert(ctx, []byte(fmt.Sprintf("row%d", n%100000)), &cassandra.ColumnParent{ColumnFamily: "cf"},
				&cassandra.Column{Name: longName(n), Value: make([]byte, 32), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE)
		}},
		{"slice-100col", func(c *cassandra.CassandraClient) error {
			res, err := c.GetSlice(ctx, []byte("wide"), &cassandra.ColumnParent{ColumnFamily: "cf"},
				&cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100}}, cassandra.ConsistencyLevel_ONE)
			if err == nil && len(res) != 100 {
				err = fmt.Errorf("slice returned %d columns", len(res))
			}
			return err
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			rate := runLoad(b, addr, op.do)
			b.ReportMetric(rate, "ops/s")
			rates.set(op.name, rate)
		})
	}
	ceiling := rates.rates["noop-ceiling"]
	if ceiling == 0 {
		return
	}
	fmt.Printf("thriftd, %d connections: no-op ceiling %.0f calls/s\n", benchClients, ceiling)
	for _, r := range []struct {
		name string
		ref  float64
	}{{"insert-1col", cassandraInsertsPerSec}, {"slice-100col", cassandraSlicesPerSec}} {
		got := rates.rates[r.name]
		fmt.Printf("%-13s %8.0f ops/s = %.2f of the ceiling; %.2fx Cassandra 3.11's %.0f ops/s (target 1.5x)\n", r.name, got, got/ceiling, got/r.ref, r.ref)
	}
}

// runLoad runs b.N operations spread over benchClients connections and
// returns the rate achieved.
func runLoad(b *testing.B, addr string, do func(*cassandra.CassandraClient) error) float64 {
	clients := make([]*cassandra.CassandraClient, benchClients)
	for i := range clients {
		clients[i] = dialBench(b, addr)
		if err := clients[i].SetKeyspace(context.Background(), "bench"); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func(c *cassandra.CassandraClient) {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := do(c); err != nil {
					failed.Store(err)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(b.N) / elapsed.Seconds()
}

func dialBench(b *testing.B, addr string) *cassandra.CassandraClient {
	b.Helper()
	conf := &thrift.TConfiguration{ConnectTimeout: 5 * time.Second, SocketTimeout: 30 * time.Second}
	tr := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(addr, conf), conf)
	if err := tr.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() })
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	return cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr)))
}

func longName(n int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(n))
}
