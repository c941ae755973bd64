package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// gatheredValue is the value of one series of m's registry: a counter or
// a gauge whose labels are labels ("name", "value", ...).
func gatheredValue(t *testing.T, m *metrics, name string, labels ...string) float64 {
	t.Helper()
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, l := range s.GetLabel() {
					found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}
				if !found {
					continue series
				}
			}
			if s.Counter != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// TestMetricsOfAFailedStore: with the Badger store closed under a serving
// daemon, a write meets a real storage failure: the client gets
// TimedOutException, thriftd_storage_errors_total{kind="failure"} counts
// it, the store's sizes leave the scrape and /healthz's check names the
// store.
func TestMetricsOfAFailedStore(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	engine, err := badgerstore.Open(ctx, badgerstore.Options{
		Dir: t.TempDir(), Partitioner: partition.Murmur3Partitioner{}, Logger: logger, GCInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.MetricsListen = "127.0.0.1:0"
	m := newMetrics(cfg, engine, logger)
	handler := legacy.NewHandler(engine, legacy.HandlerConfig{StorageObserver: m.storageObserver()}, logger)
	srv := legacy.NewServer(legacy.ServerConfig{Listen: "127.0.0.1:0", Observer: m.observer()}, handler, logger)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{engine: engine, server: srv, done: make(chan struct{}), metrics: m}
	go func() {
		d.served = srv.Serve(context.WithoutCancel(ctx))
		close(d.done)
	}()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			t.Error(err)
		}
		<-d.done
	})

	session := legacy.NewSession(1, nil)
	sctx := legacy.WithSession(ctx, session)
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = "MetricsFailedStore", "cf"
	if _, err := handler.SystemAddKeyspace(sctx, &cassandra.KsDef{Name: cf.Keyspace, StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{cf}}); err != nil {
		t.Fatal(err)
	}
	if err := handler.SetKeyspace(sctx, cf.Keyspace); err != nil {
		t.Fatal(err)
	}
	if err := d.health(ctx); err != nil {
		t.Fatalf("health of a serving daemon: %v", err)
	}
	if got := gatheredValue(t, m, "thriftd_badger_level_tables", "level", "0"); got != 0 {
		t.Errorf("tables in L0 of a new store: %v", got)
	}

	if err := engine.Close(); err != nil {
		t.Fatal(err)
	}
	ts := int64(1)
	err = handler.Insert(sctx, []byte("row"), &cassandra.ColumnParent{ColumnFamily: "cf"},
		&cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE)
	var timedOut *cassandra.TimedOutException
	if !errors.As(err, &timedOut) {
		t.Fatalf("insert into a closed store: %v (%T), want TimedOutException", err, err)
	}
	if got := gatheredValue(t, m, "thriftd_storage_errors_total", "kind", "failure"); got != 1 {
		t.Errorf("storage failures: %v, want 1", got)
	}
	if got := gatheredValue(t, m, "thriftd_storage_errors_total", "kind", "timeout"); got != 0 {
		t.Errorf("storage timeouts: %v, want 0", got)
	}
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "thriftd_badger_") {
			t.Errorf("%s scraped from a closed store", f.GetName())
		}
	}
	if err := d.health(ctx); err == nil || !strings.Contains(err.Error(), "storage engine") {
		t.Errorf("health with the store closed: %v, want the storage engine's failure", err)
	}
}

// BenchmarkMetricsPerRequest measures what metrics add to one answered
// call: the call's counter and histogram, and the bytes of its request and
// reply frames, with the clock reads of its timing.
func BenchmarkMetricsPerRequest(b *testing.B) {
	cfg := DefaultConfig()
	cfg.MetricsListen = "127.0.0.1:0"
	m := newMetrics(cfg, nil, slog.New(slog.DiscardHandler))
	call := m.Method("get_slice")
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		m.BytesReceived(120)
		call.Call(time.Since(start), legacy.Answered)
		m.BytesSent(480)
	}
}
