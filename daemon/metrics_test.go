package daemon_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// metricsTestKeyspace is the keyspace the metrics tests create in their
// own data directories.
const metricsTestKeyspace = "MetricsTest"

// startWithMetrics starts thriftd with its metrics endpoint on a free
// loopback port.
func startWithMetrics(t *testing.T, opts ...daemon.Option) *daemon.Daemon {
	t.Helper()
	cfg := daemontest.Config(t)
	cfg.MetricsListen = "127.0.0.1:0"
	d, _ := startLogged(t, cfg, opts...)
	if d.MetricsAddr() == nil {
		t.Fatal("no metrics address with metrics_listen set")
	}
	return d
}

// scrape is one read of /metrics: the metric families by name.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics reads and parses the daemon's /metrics.
func scrapeMetrics(t *testing.T, d *daemon.Daemon) scrape {
	t.Helper()
	resp, err := http.Get("http://" + d.MetricsAddr().String() + daemon.MetricsPath)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	// Legacy names: what Prometheus' classic text format allows, and
	// all that thriftd exports.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return families
}

// series finds the one series of a family whose labels are labels
// ("name", "value", ...); nil if there is none.
func (s scrape) series(name string, labels ...string) *dto.Metric {
	f := s[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		if hasLabels(m, labels) {
			return m
		}
	}
	return nil
}

func hasLabels(m *dto.Metric, labels []string) bool {
	if len(m.GetLabel()) != len(labels)/2 {
		return false
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if !slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}) {
			return false
		}
	}
	return true
}

// value is the value of a counter or gauge series, failing the test if it
// is missing.
func (s scrape) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	m := s.series(name, labels...)
	if m == nil {
		t.Fatalf("no series %s%v in the scrape", name, labels)
	}
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	t.Fatalf("%s%v is neither a counter nor a gauge", name, labels)
	return 0
}

// sum adds the values of every series of a counter family.
func (s scrape) sum(name string) float64 {
	var total float64
	for _, m := range s[name].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	return total
}

// countingConn counts the bytes a client writes and reads.
type countingConn struct {
	net.Conn
	written, read *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// dialCounted opens a framed binary client whose bytes are counted in
// written and read.
func dialCounted(t *testing.T, addr string, written, read *atomic.Int64) *thriftClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, hardeningTimeout)
	if err != nil {
		t.Fatal(err)
	}
	conf := &thrift.TConfiguration{ConnectTimeout: hardeningTimeout, SocketTimeout: hardeningTimeout}
	sock := thrift.NewTSocketFromConnConf(countingConn{Conn: nc, written: written, read: read}, conf)
	tr := thrift.NewTFramedTransportConf(sock, conf)
	t.Cleanup(func() { _ = tr.Close() })
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	return &thriftClient{cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr))), tr}
}

// callUnknownMethod calls a method the IDL does not have and checks that
// it is answered with a TApplicationException.
func callUnknownMethod(ctx context.Context, t *testing.T, c *thriftClient) {
	t.Helper()
	p := thrift.NewTBinaryProtocolConf(c.tr, &thrift.TConfiguration{})
	for _, step := range []func() error{
		func() error { return p.WriteMessageBegin(ctx, "no_such_method", thrift.CALL, 1) },
		func() error { return p.WriteStructBegin(ctx, "args") },
		func() error { return p.WriteFieldStop(ctx) },
		func() error { return p.WriteStructEnd(ctx) },
		func() error { return p.WriteMessageEnd(ctx) },
		func() error { return p.Flush(ctx) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	_, typeID, _, err := p.ReadMessageBegin(ctx)
	if err != nil || typeID != thrift.EXCEPTION {
		t.Fatalf("unknown method answered %v, %v; want an exception", typeID, err)
	}
	exc := thrift.NewTApplicationException(0, "")
	if err := exc.Read(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := p.ReadMessageEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if exc.TypeId() != thrift.UNKNOWN_METHOD {
		t.Fatalf("unknown method answered %v, want UNKNOWN_METHOD", exc)
	}
}

// TestMetricsCountCalls: over real connections, the counters and the
// histogram move by exactly the calls made, the errors are counted by
// exception, the bytes are those the clients sent and read, and the
// connections gauge is back to 0 once the clients leave.
func TestMetricsCountCalls(t *testing.T) {
	d := startWithMetrics(t)
	ctx := testContext(t)

	before := scrapeMetrics(t, d)
	if got := before.sum("thriftd_requests_total"); got != 0 {
		t.Fatalf("requests before any call: %v", got)
	}
	if got := before.value(t, "thriftd_connections_open"); got != 0 {
		t.Fatalf("connections open before any client: %v", got)
	}

	var written, read atomic.Int64
	c := dialCounted(t, d.Addr().String(), &written, &read)
	other := dialCounted(t, d.Addr().String(), &written, &read)

	calls := map[string]int{}
	exceptions := map[[2]string]int{}
	call := func(method, exception string, err error) {
		t.Helper()
		calls[method]++
		got := ""
		if err != nil {
			got = strings.TrimPrefix(fmt.Sprintf("%T", err), "*cassandra.")
		}
		if got != exception {
			t.Fatalf("%s: %v (%s), want %q", method, err, got, exception)
		}
		if exception != "" {
			exceptions[[2]string{method, exception}]++
		}
	}
	for range 3 {
		_, err := c.DescribeVersion(ctx)
		call("describe_version", "", err)
	}
	_, err := other.DescribeClusterName(ctx)
	call("describe_cluster_name", "", err)

	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = metricsTestKeyspace, "cf"
	_, err = c.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: metricsTestKeyspace, StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{cf}})
	call("system_add_keyspace", "", err)
	call("set_keyspace", "", c.SetKeyspace(ctx, metricsTestKeyspace))
	ts := int64(1)
	for _, name := range []string{"a", "b"} {
		call("insert", "", c.Insert(ctx, []byte("row"), &cassandra.ColumnParent{ColumnFamily: "cf"},
			&cassandra.Column{Name: []byte(name), Value: []byte("v"), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE))
	}
	_, err = c.Get(ctx, []byte("row"), &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("a")}, cassandra.ConsistencyLevel_ONE)
	call("get", "", err)
	for range 2 {
		_, err = c.Get(ctx, []byte("row"), &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("missing")}, cassandra.ConsistencyLevel_ONE)
		call("get", "NotFoundException", err)
	}
	_, err = c.GetSlice(ctx, []byte("row"), &cassandra.ColumnParent{ColumnFamily: "no_such_cf"},
		&cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 10}}, cassandra.ConsistencyLevel_ONE)
	call("get_slice", "InvalidRequestException", err)
	_, err = other.DescribeKeyspace(ctx, "NoSuchKeyspace")
	call("describe_keyspace", "NotFoundException", err)
	callUnknownMethod(ctx, t, other)
	calls["unknown"]++
	exceptions[[2]string{"unknown", "TApplicationException"}]++

	total := 0
	for _, n := range calls {
		total += n
	}
	// A call and its reply's bytes are counted once the reply is sent,
	// which the client may read first: the scrape waits, boundedly, for
	// the last call.
	s := scrapeMetrics(t, d)
	settled := func(s scrape) bool {
		return s.sum("thriftd_requests_total") >= float64(total) && s.value(t, "thriftd_bytes_sent_total") >= float64(read.Load())
	}
	for deadline := time.Now().Add(5 * time.Second); !settled(s) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		s = scrapeMetrics(t, d)
	}
	for method, n := range calls {
		if got := s.value(t, "thriftd_requests_total", "method", method); got != float64(n) {
			t.Errorf("thriftd_requests_total{method=%q} = %v, want %d", method, got, n)
		}
		if method == "unknown" {
			continue // refused before a method is timed
		}
		h := s.series("thriftd_request_duration_seconds", "method", method).GetHistogram()
		if h.GetSampleCount() != uint64(n) || !(h.GetSampleSum() > 0) {
			t.Errorf("thriftd_request_duration_seconds{method=%q}: %d samples, sum %v; want %d samples, sum > 0",
				method, h.GetSampleCount(), h.GetSampleSum(), n)
		}
	}
	if got := s.sum("thriftd_requests_total"); got != float64(total) {
		t.Errorf("thriftd_requests_total, every method: %v, want %d", got, total)
	}
	errorsTotal := 0
	for key, n := range exceptions {
		errorsTotal += n
		if got := s.value(t, "thriftd_request_errors_total", "method", key[0], "exception", key[1]); got != float64(n) {
			t.Errorf("thriftd_request_errors_total{method=%q,exception=%q} = %v, want %d", key[0], key[1], got, n)
		}
	}
	if got := s.sum("thriftd_request_errors_total"); got != float64(errorsTotal) {
		t.Errorf("thriftd_request_errors_total, every series: %v, want %d", got, errorsTotal)
	}
	for _, kind := range []string{"timeout", "failure"} {
		if got := s.value(t, "thriftd_storage_errors_total", "kind", kind); got != 0 {
			t.Errorf("thriftd_storage_errors_total{kind=%q} = %v, want 0", kind, got)
		}
	}
	if got := s.value(t, "thriftd_connections_open"); got != 2 {
		t.Errorf("thriftd_connections_open with two clients: %v", got)
	}
	if got := s.value(t, "thriftd_connections_total"); got != 2 {
		t.Errorf("thriftd_connections_total with two clients: %v", got)
	}
	// Every reply has been read whole: the server's byte counts are the
	// clients'.
	if got, want := s.value(t, "thriftd_bytes_received_total"), float64(written.Load()); got != want {
		t.Errorf("thriftd_bytes_received_total = %v, the clients wrote %v", got, want)
	}
	if got, want := s.value(t, "thriftd_bytes_sent_total"), float64(read.Load()); got != want {
		t.Errorf("thriftd_bytes_sent_total = %v, the clients read %v", got, want)
	}
	for _, name := range []string{"thriftd_badger_lsm_bytes", "thriftd_badger_vlog_bytes"} {
		if v := s.value(t, name); v < 0 || math.IsNaN(v) {
			t.Errorf("%s = %v", name, v)
		}
	}
	if s.series("thriftd_badger_level_tables", "level", "0") == nil {
		t.Error("no thriftd_badger_level_tables{level=\"0\"}")
	}
	// The disk guard keeps at least twice the memtable free (8 MiB at the
	// smallest budget).
	if free, reserve := s.value(t, "thriftd_badger_disk_free_bytes"), s.value(t, "thriftd_badger_disk_reserve_bytes"); free <= 0 || reserve < 16<<20 {
		t.Errorf("thriftd_badger_disk_free_bytes = %v, thriftd_badger_disk_reserve_bytes = %v", free, reserve)
	}
	for _, outcome := range []string{"shared", "alone_after_failure"} {
		if s.series("thriftd_badger_group_commit_writes_total", "outcome", outcome) == nil {
			t.Errorf("no thriftd_badger_group_commit_writes_total{outcome=%q}", outcome)
		}
	}
	for _, snapshot := range []string{"shared", "opened"} {
		if s.series("thriftd_badger_read_snapshots_total", "snapshot", snapshot) == nil {
			t.Errorf("no thriftd_badger_read_snapshots_total{snapshot=%q}", snapshot)
		}
	}
	for _, cache := range []string{"counter", "pack"} {
		for _, result := range []string{"hit", "miss"} {
			name := "thriftd_badger_" + cache + "_cache_requests_total"
			if s.series(name, "result", result) == nil {
				t.Errorf("no %s{result=%q}", name, result)
			}
		}
		if s["thriftd_badger_"+cache+"_cache_bytes"] == nil {
			t.Errorf("thriftd_badger_%s_cache_bytes is not exported", cache)
		}
	}
	for _, name := range []string{"thriftd_badger_counter_filter_skipped_reads_total", "thriftd_badger_counter_filter_bytes",
		"thriftd_badger_row_mark_filter_skipped_reads_total", "thriftd_badger_row_mark_filter_bytes"} {
		if v := s.value(t, name); v < 0 || math.IsNaN(v) {
			t.Errorf("%s = %v", name, v)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "thriftd_connections_refused_total"} {
		if s[name] == nil {
			t.Errorf("%s is not exported", name)
		}
	}

	_ = c.tr.Close()
	_ = other.tr.Close()
	waitFor(t, "the connections gauge to be back to 0", func() bool {
		return scrapeMetrics(t, d).value(t, "thriftd_connections_open") == 0
	})
	if got := scrapeMetrics(t, d).value(t, "thriftd_connections_total"); got != 2 {
		t.Errorf("thriftd_connections_total after the clients left: %v, want 2", got)
	}
}

// TestMetricsRefusedConnections: a connection beyond max_connections is
// counted as refused, not as served.
func TestMetricsRefusedConnections(t *testing.T) {
	cfg := daemontest.Config(t)
	cfg.MetricsListen = "127.0.0.1:0"
	cfg.MaxConnections = 1
	d, _ := startLogged(t, cfg)
	ctx := testContext(t)
	first := mustDialThrift(t, d.Addr().String(), nil)
	if _, err := first.DescribeVersion(ctx); err != nil {
		t.Fatal(err)
	}
	second := mustDialThrift(t, d.Addr().String(), nil)
	if _, err := second.DescribeVersion(ctx); err == nil {
		t.Fatal("a second connection was served with max_connections 1")
	}
	s := scrapeMetrics(t, d)
	if got := s.value(t, "thriftd_connections_refused_total", "reason", "max_connections"); got != 1 {
		t.Errorf("refused for max_connections: %v, want 1", got)
	}
	if got := s.value(t, "thriftd_connections_total"); got != 1 {
		t.Errorf("connections served: %v, want 1", got)
	}
	if got := s.value(t, "thriftd_requests_total", "method", "describe_version"); got != 1 {
		t.Errorf("describe_version calls: %v, want 1", got)
	}
}

// TestMetricsTLSRefusal: a plaintext client on a TLS port is counted as
// refused for its failed handshake; the TLS client's bytes are those of
// its frames, not of the TLS records.
func TestMetricsTLSRefusal(t *testing.T) {
	f := newTLSFixture(t)
	cfg := daemontest.Config(t)
	cfg.MetricsListen = "127.0.0.1:0"
	cfg.ClientEncryption = daemon.ClientEncryptionOptions{Enabled: true, Keystore: f.certPath, PrivateKey: f.keyPath}
	d, _ := startLogged(t, cfg)
	ctx := testContext(t)
	plain := mustDialThrift(t, d.Addr().String(), nil)
	if _, err := plain.DescribeVersion(ctx); err == nil {
		t.Fatal("a plaintext client on the TLS port was answered")
	}
	waitFor(t, "the refused handshake to be counted", func() bool {
		return scrapeMetrics(t, d).value(t, "thriftd_connections_refused_total", "reason", "tls_handshake") == 1
	})
	c := mustDialThrift(t, d.Addr().String(), f.clientConfig())
	if _, err := c.DescribeVersion(ctx); err != nil {
		t.Fatal(err)
	}
	s := scrapeMetrics(t, d)
	if got := s.value(t, "thriftd_requests_total", "method", "describe_version"); got != 1 {
		t.Errorf("describe_version calls: %v, want 1", got)
	}
	// describe_version's frame: 4-byte length, 4-byte version, the name
	// with its 4-byte length, the sequence id, an empty struct.
	if got, want := s.value(t, "thriftd_bytes_received_total"), float64(4+4+4+len("describe_version")+4+1); got != want {
		t.Errorf("bytes received: %v, want %v", got, want)
	}
}

// TestMetricsPerDaemon: two daemons in one process keep their own
// metrics.
func TestMetricsPerDaemon(t *testing.T) {
	a, b := startWithMetrics(t), startWithMetrics(t)
	ctx := testContext(t)
	c := mustDialThrift(t, a.Addr().String(), nil)
	for range 2 {
		if _, err := c.DescribeVersion(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := scrapeMetrics(t, a).value(t, "thriftd_requests_total", "method", "describe_version"); got != 2 {
		t.Errorf("the called daemon counts %v calls, want 2", got)
	}
	if got := scrapeMetrics(t, b).value(t, "thriftd_requests_total", "method", "describe_version"); got != 0 {
		t.Errorf("the other daemon counts %v calls, want 0", got)
	}
}

// TestMetricsOff: without metrics_listen there is no endpoint.
func TestMetricsOff(t *testing.T) {
	d, _ := startLogged(t, daemontest.Config(t))
	if addr := d.MetricsAddr(); addr != nil {
		t.Errorf("metrics endpoint on %s without metrics_listen", addr)
	}
}

// getHealth reads /healthz: its status and body.
func getHealth(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + daemon.HealthPath)
	if err != nil {
		t.Fatalf("healthz: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, strings.TrimSpace(string(body))
}

// blockingVersion holds describe_version calls until released.
type blockingVersion struct {
	cassandra.Cassandra
	entered chan struct{}
	release chan struct{}
}

func (b *blockingVersion) DescribeVersion(ctx context.Context) (string, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Cassandra.DescribeVersion(ctx)
}

// TestHealthz: 200 "ok" while serving; 503 "stopping" as soon as Stop
// begins, while a call in flight is still being answered; the endpoint is
// gone once Stop returns.
func TestHealthz(t *testing.T) {
	blocking := &blockingVersion{entered: make(chan struct{}), release: make(chan struct{})}
	cfg := daemontest.Config(t)
	cfg.MetricsListen = "127.0.0.1:0"
	d, err := daemon.Start(context.Background(), cfg, slog.New(slog.DiscardHandler), daemon.WithHandlerWrapper(func(h cassandra.Cassandra) cassandra.Cassandra {
		blocking.Cassandra = h
		return blocking
	}))
	if err != nil {
		t.Fatal(err)
	}
	stopping := false
	t.Cleanup(func() {
		if !stopping { // the test failed before its Stop
			close(blocking.release)
			_ = d.Stop(context.Background())
		}
	})
	addr := d.MetricsAddr().String()
	if code, body := getHealth(t, addr); code != http.StatusOK || body != "ok" {
		t.Fatalf("healthz while serving: %d %q", code, body)
	}

	ctx := testContext(t)
	c := mustDialThrift(t, d.Addr().String(), nil)
	var version string
	var callErr error
	var wg sync.WaitGroup
	wg.Go(func() { version, callErr = c.DescribeVersion(ctx) })
	<-blocking.entered
	stopped := make(chan error, 1)
	stopping = true
	go func() { stopped <- d.Stop(ctx) }()
	waitFor(t, "healthz to answer 503 once Stop began", func() bool {
		code, _ := getHealth(t, addr)
		return code == http.StatusServiceUnavailable
	})
	if code, body := getHealth(t, addr); code != http.StatusServiceUnavailable || body != "stopping" {
		t.Errorf("healthz while stopping: %d %q", code, body)
	}
	close(blocking.release)
	wg.Wait()
	if callErr != nil || version == "" {
		t.Errorf("the call in flight during Stop: %q, %v", version, callErr)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := http.Get("http://" + addr + daemon.HealthPath); err == nil {
		t.Error("the metrics endpoint still answers after Stop")
	}
}

// panickingKeyspaces panics in describe_keyspaces.
type panickingKeyspaces struct{ cassandra.Cassandra }

func (panickingKeyspaces) DescribeKeyspaces(context.Context) ([]*cassandra.KsDef, error) {
	panic("describe_keyspaces failed")
}

// TestMetricsCountPanics: a call whose handler panics is counted, timed
// and counted as the TApplicationException the client gets.
func TestMetricsCountPanics(t *testing.T) {
	d := startWithMetrics(t, daemon.WithHandlerWrapper(func(h cassandra.Cassandra) cassandra.Cassandra {
		return panickingKeyspaces{h}
	}))
	ctx := testContext(t)
	c := mustDialThrift(t, d.Addr().String(), nil)
	_, err := c.DescribeKeyspaces(ctx)
	var appErr thrift.TApplicationException
	if !errors.As(err, &appErr) || appErr.TypeId() != thrift.INTERNAL_ERROR {
		t.Fatalf("describe_keyspaces: %v, want an internal error", err)
	}
	s := scrapeMetrics(t, d)
	if got := s.value(t, "thriftd_requests_total", "method", "describe_keyspaces"); got != 1 {
		t.Errorf("describe_keyspaces calls: %v, want 1", got)
	}
	if got := s.value(t, "thriftd_request_errors_total", "method", "describe_keyspaces", "exception", "TApplicationException"); got != 1 {
		t.Errorf("describe_keyspaces TApplicationException: %v, want 1", got)
	}
	if got := s.series("thriftd_request_duration_seconds", "method", "describe_keyspaces").GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("describe_keyspaces timed %d times, want 1", got)
	}
}

// TestMetricsListenTaken: a metrics address already in use fails the
// start, and the Thrift port and the data directory are released.
func TestMetricsListenTaken(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := daemontest.Config(t)
	cfg.MetricsListen = busy.Addr().String()
	if d, err := daemon.Start(context.Background(), cfg, slog.New(slog.DiscardHandler)); err == nil {
		_ = d.Stop(context.Background())
		t.Fatal("started with its metrics address taken")
	} else if !strings.Contains(err.Error(), "metrics endpoint") {
		t.Errorf("error %q does not name the metrics endpoint", err)
	}
	cfg.MetricsListen = "127.0.0.1:0"
	d, _ := startLogged(t, cfg) // the data directory was released
	if d.MetricsAddr() == nil {
		t.Fatal("no metrics endpoint")
	}
}

// TestMetricsListenSetting: --metrics-listen and metrics_listen set the
// endpoint; a malformed address is refused.
func TestMetricsListenSetting(t *testing.T) {
	if got := parseFlags(t, "--metrics-listen", "127.0.0.1:9103").MetricsListen; got != "127.0.0.1:9103" {
		t.Errorf("--metrics-listen: %q", got)
	}
	if got := daemon.DefaultConfig().MetricsListen; got != "" {
		t.Errorf("metrics on by default: %q", got)
	}
	cfg := daemon.DefaultConfig()
	cfg.MetricsListen = "9103"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "metrics_listen") {
		t.Errorf("metrics_listen 9103: %v, want an error naming metrics_listen", err)
	}
}

// grafanaDashboard is what the test reads of docs/grafana-thriftd.json.
type grafanaDashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	Inputs        []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Datasource json.RawMessage `json:"datasource"`
			Query      json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaPanel struct {
	Title      string          `json:"title"`
	Type       string          `json:"type"`
	Datasource json.RawMessage `json:"datasource"`
	Targets    []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // of a collapsed row
}

// promqlMetricName finds the metric names of an expression: the
// identifiers of the families thriftd exports and of the Go and process
// collectors.
var promqlMetricName = regexp.MustCompile(`\b(?:thriftd|go|process)_[a-zA-Z0-9_:]*`)

// histogramSeries are the suffixes of a histogram's series.
var histogramSeries = []string{"_bucket", "_sum", "_count"}

// TestGrafanaDashboard: docs/grafana-thriftd.json is an importable
// dashboard on a ${DS_PROMETHEUS} data source, and every panel queries
// metrics that a running thriftd exports: no dead panels.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(golden.Path(t, "docs", "grafana-thriftd.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash grafanaDashboard
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if dash.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want 36 or more", dash.SchemaVersion)
	}
	if !slices.ContainsFunc(dash.Inputs, func(in struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	}) bool {
		return in.Name == "DS_PROMETHEUS" && in.Type == "datasource" && in.PluginID == "prometheus"
	}) {
		t.Error("no DS_PROMETHEUS data source input")
	}
	var queries []string // of the panels and the variables
	dsVariable := false
	for _, v := range dash.Templating.List {
		switch v.Type {
		case "datasource":
			dsVariable = dsVariable || v.Name == "DS_PROMETHEUS" && string(v.Query) == `"prometheus"`
		case "query":
			if !strings.Contains(string(v.Datasource), "${DS_PROMETHEUS}") {
				t.Errorf("variable %s: data source %s, want ${DS_PROMETHEUS}", v.Name, v.Datasource)
			}
			queries = append(queries, string(v.Query))
		}
	}
	if !dsVariable {
		t.Error("no DS_PROMETHEUS data source variable of type prometheus")
	}

	// A scrape of a thriftd that has served calls of every kind.
	d := startWithMetrics(t)
	ctx := testContext(t)
	c := mustDialThrift(t, d.Addr().String(), nil)
	if _, err := c.DescribeKeyspace(ctx, "NoSuchKeyspace"); err == nil {
		t.Fatal("describe_keyspace of a missing keyspace succeeded")
	}
	exported := scrapeMetrics(t, d)

	var panels []grafanaPanel
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			panels = append(panels, p)
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	queried := map[string]bool{}
	for _, p := range panels {
		if p.Type == "row" {
			continue
		}
		if !strings.Contains(string(p.Datasource), "${DS_PROMETHEUS}") {
			t.Errorf("panel %q: data source %s, want ${DS_PROMETHEUS}", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			queries = append(queries, target.Expr)
			if len(promqlMetricName.FindAllString(target.Expr, -1)) == 0 {
				t.Errorf("panel %q: query %q names no metric of thriftd", p.Title, target.Expr)
			}
		}
	}
	for _, q := range queries {
		{
			for _, name := range promqlMetricName.FindAllString(q, -1) {
				family := name
				for _, suffix := range histogramSeries {
					if base, ok := strings.CutSuffix(name, suffix); ok && exported[base].GetType() == dto.MetricType_HISTOGRAM {
						family = base
					}
				}
				if exported[family] == nil {
					t.Errorf("query %q reads %s, which thriftd does not export", q, name)
				}
				queried[family] = true
			}
		}
	}
	for _, family := range []string{
		"thriftd_requests_total", "thriftd_request_errors_total", "thriftd_request_duration_seconds",
		"thriftd_connections_open", "thriftd_bytes_received_total", "thriftd_bytes_sent_total",
		"thriftd_badger_lsm_bytes", "thriftd_badger_vlog_bytes",
	} {
		if !queried[family] {
			t.Errorf("no panel shows %s", family)
		}
	}
}

// BenchmarkRoundTripMetrics measures a describe_version call over
// loopback through the whole daemon, with and without metrics: the cost
// of the hooks is the difference.
func BenchmarkRoundTripMetrics(b *testing.B) {
	frame := describeVersionFrame(b)
	for _, metrics := range []bool{false, true} {
		b.Run(fmt.Sprintf("metrics=%v", metrics), func(b *testing.B) {
			cfg := daemontest.Config(b)
			if metrics {
				cfg.MetricsListen = "127.0.0.1:0"
			}
			addr := daemontest.Start(b, cfg)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			reply := make([]byte, 4096)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, reply[:4]); err != nil {
					b.Fatal(err)
				}
				n := binary.BigEndian.Uint32(reply)
				if int(n) > len(reply) {
					b.Fatal(errors.New("reply larger than the buffer"))
				}
				if _, err := io.ReadFull(conn, reply[:n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// describeVersionFrame is a framed describe_version call.
func describeVersionFrame(b *testing.B) []byte {
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})
	if err := p.WriteMessageBegin(ctx, "describe_version", thrift.CALL, 1); err != nil {
		b.Fatal(err)
	}
	if err := (&cassandra.CassandraDescribeVersionArgs{}).Write(ctx, p); err != nil {
		b.Fatal(err)
	}
	if err := p.WriteMessageEnd(ctx); err != nil {
		b.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(buf.Len())), buf.Bytes()...)
}
