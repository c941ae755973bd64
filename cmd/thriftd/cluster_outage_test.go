package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The chaos node of test/cassandra/cassandra.sh: Cassandra 5.0, CQL only,
// started and stopped by this test alone.
const (
	chaosNode  = "chaos"
	chaosHosts = "127.0.0.1:29043"
	// chaosScriptTimeout bounds one start, resume or stop of the node.
	chaosScriptTimeout = 4 * time.Minute
)

// Bounds of the outage test.
const (
	// outageRequestTimeout is thriftd's --*-request-timeout-ms.
	outageRequestTimeout = 2 * time.Second
	// outageMargin is how much later than the request timeout a call may
	// return on a machine loaded by other work; a call that takes longer
	// hangs.
	outageMargin = 5 * time.Second
	// outageClientTimeout is the clients' socket timeout: longer than
	// the timeout and the margin, so that a hang is seen as one.
	outageClientTimeout = 20 * time.Second
	// outageDownFor is how long the load runs on a stopped node.
	outageDownFor = 3 * time.Second
	// recoverWithin bounds the time from the node's CQL port opening
	// again to every connection's calls succeeding.
	recoverWithin = 60 * time.Second
	outageConns   = 6
)

// chaosScript returns the path of cassandra.sh, or skips loudly when this
// machine cannot run the chaos node.
func chaosScript(t *testing.T) string {
	t.Helper()
	if os.Getenv("THRIFTBRIDGE_CASSANDRA") == "off" {
		t.Skip("!!! SKIPPED: the cluster outage test needs a Cassandra node of its own (THRIFTBRIDGE_CASSANDRA=off) !!!")
	}
	if testing.Short() {
		t.Skip("!!! SKIPPED: the cluster outage test starts and stops a Cassandra node (-short) !!!")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("!!! SKIPPED: the cluster outage test runs a Cassandra 5.0 node: java not found (Debian: default-jdk-headless) !!!")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(repo, "test", "cassandra", "cassandra.sh")
	// cassandra.sh installs the jars with Maven the first time.
	version := os.Getenv("CASSANDRA_TARGET_VERSION")
	if version == "" {
		version = "5.0.9"
	}
	cache := os.Getenv("CASSANDRA_CACHE")
	if cache == "" {
		cache = filepath.Join(repo, ".cache", "cassandra")
	}
	if _, err := os.Stat(filepath.Join(cache, "lib", version, ".complete")); err != nil {
		if _, err := exec.LookPath("mvn"); err != nil {
			t.Skipf("!!! SKIPPED: the cluster outage test runs a Cassandra %s node: its jars are not in %s and mvn is not here to fetch them (Debian: maven) !!!", version, cache)
		}
	}
	return script
}

// runChaos runs cassandra.sh with args and returns how long it took.
func runChaos(t *testing.T, script string, args ...string) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chaosScriptTimeout)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, script, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cassandra.sh %v: %v\n%s", args, err, out)
	}
	return time.Since(start)
}

// outageCall is one call of the load.
type outageCall struct {
	method string
	start  time.Time
	took   time.Duration
	err    error
}

// outageWrite is a cell whose write thriftd acknowledged.
type outageWrite struct {
	key, name, value string
}

// outageClient is one connection of the load, opened again when a call
// breaks it.
type outageClient struct {
	addr string
	tr   thrift.TTransport
	c    *cassandra.CassandraClient
}

func (oc *outageClient) open(ctx context.Context) error {
	conf := &thrift.TConfiguration{ConnectTimeout: outageClientTimeout, SocketTimeout: outageClientTimeout}
	tr := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(oc.addr, conf), conf)
	if err := tr.Open(); err != nil {
		return err
	}
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	c := cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr)))
	if err := c.SetKeyspace(ctx, "Outage"); err != nil {
		tr.Close()
		return err
	}
	oc.tr, oc.c = tr, c
	return nil
}

func (oc *outageClient) close() {
	if oc.tr != nil {
		oc.tr.Close()
		oc.tr, oc.c = nil, nil
	}
}

// outageLoad is the load: each connection writes its own rows by insert
// and batch_mutate and reads them back by get_slice, one call at a time.
type outageLoad struct {
	addr string
	mu   sync.Mutex
	// calls and acked are appended by the workers.
	calls []outageCall
	acked []outageWrite
}

// worker makes calls until stop is closed, pausing a little after a
// failed one so that an outage does not turn into a busy loop.
func (l *outageLoad) worker(ctx context.Context, id int, stop <-chan struct{}) {
	oc := &outageClient{addr: l.addr}
	defer oc.close()
	parent := &cassandra.ColumnParent{ColumnFamily: "cf"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("w%d-r%d", id, i%50)
		ts := time.Now().UnixMicro()
		var call outageCall
		call.start = time.Now()
		err := error(nil)
		if oc.c == nil {
			err = oc.open(ctx)
		}
		var acked []outageWrite
		if err == nil {
			switch i % 3 {
			case 0:
				call.method = "insert"
				w := outageWrite{key, fmt.Sprintf("i%06d", i), fmt.Sprintf("v%d-%d", id, i)}
				err = oc.c.Insert(ctx, []byte(key), parent, &cassandra.Column{Name: []byte(w.name), Value: []byte(w.value), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE)
				acked = append(acked, w)
			case 1:
				call.method = "batch_mutate"
				var muts []*cassandra.Mutation
				for j := range 3 {
					w := outageWrite{key, fmt.Sprintf("b%06d-%d", i, j), fmt.Sprintf("v%d-%d-%d", id, i, j)}
					muts = append(muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
						Column: &cassandra.Column{Name: []byte(w.name), Value: []byte(w.value), Timestamp: &ts}}})
					acked = append(acked, w)
				}
				err = oc.c.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{key: {"cf": muts}}, cassandra.ConsistencyLevel_ONE)
			default:
				call.method = "get_slice"
				_, err = oc.c.GetSlice(ctx, []byte(key), parent, &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{
					Start: []byte{}, Finish: []byte{}, Count: 100}}, cassandra.ConsistencyLevel_ONE)
			}
		} else {
			call.method = "connect"
		}
		call.took, call.err = time.Since(call.start), err
		l.mu.Lock()
		l.calls = append(l.calls, call)
		if err == nil {
			l.acked = append(l.acked, acked...)
		}
		l.mu.Unlock()
		if err != nil {
			if !isDeclaredException(err) {
				oc.close()
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// isDeclaredException reports an exception of the IDL, after which the
// connection goes on.
func isDeclaredException(err error) bool {
	var (
		ue  *cassandra.UnavailableException
		te  *cassandra.TimedOutException
		ire *cassandra.InvalidRequestException
		tae thrift.TApplicationException
	)
	return errors.As(err, &ue) || errors.As(err, &te) || errors.As(err, &ire) || errors.As(err, &tae)
}

// errKind names an error for the tally.
func errKind(err error) string {
	var (
		ue  *cassandra.UnavailableException
		te  *cassandra.TimedOutException
		ire *cassandra.InvalidRequestException
		tae thrift.TApplicationException
	)
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ue):
		return "UnavailableException"
	case errors.As(err, &te):
		return "TimedOutException"
	case errors.As(err, &ire):
		return "InvalidRequestException: " + ire.Why
	case errors.As(err, &tae):
		return "TApplicationException: " + tae.Error()
	}
	return "transport: " + err.Error()
}

// callsBetween returns the calls that started in [from, to).
func (l *outageLoad) callsBetween(from, to time.Time) []outageCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []outageCall
	for _, c := range l.calls {
		if !c.start.Before(from) && c.start.Before(to) {
			out = append(out, c)
		}
	}
	return out
}

// healthz returns the status of thriftd's /healthz and its body.
func healthz(metricsAddr string) string {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + metricsAddr + "/healthz")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body := make([]byte, 200)
	n, _ := resp.Body.Read(body)
	return strconv.Itoa(resp.StatusCode) + " " + string(body[:n])
}

// TestClusterOutage runs thriftd on a Cassandra 5.0 node of its own (the
// chaos node of test/cassandra/cassandra.sh) under a Thrift load from
// several connections (insert, batch_mutate, get_slice), stops the node,
// and holds thriftd to Cassandra's own behaviour when replicas are gone:
// every call answers UnavailableException or TimedOutException within the
// request timeout (plus a margin for a loaded machine), none hangs, and
// thriftd goes on. The node is started again on its data: thriftd serves
// again within recoverWithin without a restart (the driver reconnects),
// and every write acknowledged before or after the outage is read back.
// The figures of the outage are logged.
func TestClusterOutage(t *testing.T) {
	script := chaosScript(t)
	started := runChaos(t, script, "start", chaosNode)
	t.Cleanup(func() { runChaos(t, script, "stop", chaosNode) })
	t.Logf("chaos node up in %s", started.Round(time.Second))

	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	run := "tbo" + hex.EncodeToString(id[:])
	metricsAddr := freeLoopbackAddr(t)
	timeoutMS := strconv.Itoa(int(outageRequestTimeout / time.Millisecond))
	child, addr := startChild(t, "--backend", "cql://"+chaosHosts, "--data-dir", t.TempDir(),
		"--cql-keyspace-prefix", run+"_", "--cql-meta-keyspace", run+"_meta", "--cql-consistency", "one",
		"--metrics-listen", metricsAddr, "--read-request-timeout-ms", timeoutMS,
		"--write-request-timeout-ms", timeoutMS, "--range-request-timeout-ms", timeoutMS)
	ctx := context.Background()
	admin := dialTest(t, addr)
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = "Outage", "cf"
	if _, err := admin.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: "Outage", StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{cf}}); err != nil {
		t.Fatal(err)
	}

	load := &outageLoad{addr: addr}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range outageConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			load.worker(ctx, i, stop)
		}()
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopLoad)

	// Before: the load runs without a failure.
	begin := time.Now()
	time.Sleep(2 * time.Second)
	for _, c := range load.callsBetween(begin, time.Now()) {
		if c.err != nil {
			t.Fatalf("before the outage, %s failed: %v", c.method, c.err)
		}
	}

	// The outage: from the stop of the node to its CQL port open again.
	outageStart := time.Now()
	stopTook := runChaos(t, script, "stop", chaosNode)
	time.Sleep(outageDownFor)
	downHealth := healthz(metricsAddr)
	resumeTook := runChaos(t, script, "resume", chaosNode)
	portOpen := time.Now()

	// Recovery: every connection's calls succeed again.
	recovered := time.Time{}
	for deadline := portOpen.Add(recoverWithin); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		since := time.Now().Add(-1500 * time.Millisecond)
		calls := load.callsBetween(since, time.Now())
		ok := len(calls) >= outageConns
		for _, c := range calls {
			ok = ok && c.err == nil
		}
		if ok {
			recovered = since
			break
		}
	}
	if recovered.IsZero() {
		var last []string
		for _, c := range load.callsBetween(time.Now().Add(-2*time.Second), time.Now()) {
			last = append(last, c.method+": "+errKind(c.err))
		}
		t.Fatalf("thriftd did not serve again within %s of the node's port opening; last calls: %v", recoverWithin, last)
	}
	// After: a while of load with no failure.
	time.Sleep(2 * time.Second)
	stopLoad()
	end := time.Now()

	if err := probeAlive(child); err != nil {
		t.Fatalf("thriftd is gone after the outage: %v", err)
	}

	// Every call of the outage answered an exception Cassandra answers
	// when replicas are gone, or succeeded (before the node was down, or
	// after it was back), within the request timeout and the margin.
	kinds := map[string]int{}
	var maxTook time.Duration
	outage := load.callsBetween(outageStart, recovered)
	for _, c := range outage {
		kinds[errKind(c.err)]++
		maxTook = max(maxTook, c.took)
		switch k := errKind(c.err); k {
		case "ok", "UnavailableException", "TimedOutException":
		default:
			if c.method == "connect" {
				t.Errorf("a new connection to thriftd failed during the outage: %v", c.err)
				continue
			}
			t.Errorf("during the outage %s answered %s; want UnavailableException or TimedOutException", c.method, k)
		}
		if c.took > outageRequestTimeout+outageMargin {
			t.Errorf("during the outage %s took %s (the request timeout is %s)", c.method, c.took, outageRequestTimeout)
		}
	}
	if kinds["UnavailableException"]+kinds["TimedOutException"] == 0 {
		t.Errorf("no call failed while the node was stopped: %v", kinds)
	}
	for _, c := range load.callsBetween(recovered, end) {
		if c.err != nil {
			t.Errorf("after the recovery %s failed: %v", c.method, c.err)
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	tally := ""
	for _, k := range names {
		tally += fmt.Sprintf(" %s=%d", k, kinds[k])
	}
	t.Logf("outage: node stop took %s, resume %s; %d calls from the stop to the recovery:%s; slowest %s; /healthz with the node down: %q; served again %s after the port opened (%s after the stop began)",
		stopTook.Round(time.Millisecond), resumeTook.Round(time.Millisecond), len(outage), tally, maxTook.Round(time.Millisecond),
		downHealth, recovered.Sub(portOpen).Round(time.Millisecond), recovered.Sub(outageStart).Round(time.Millisecond))

	// Every acknowledged write is there.
	load.mu.Lock()
	acked := append([]outageWrite(nil), load.acked...)
	load.mu.Unlock()
	byKey := map[string]map[string]string{}
	for _, w := range acked {
		if byKey[w.key] == nil {
			byKey[w.key] = map[string]string{}
		}
		byKey[w.key][w.name] = w.value
	}
	reader := dialTest(t, addr)
	if err := reader.SetKeyspace(ctx, "Outage"); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for key, want := range byKey {
		got, err := reader.GetSlice(ctx, []byte(key), &cassandra.ColumnParent{ColumnFamily: "cf"},
			&cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100000}}, cassandra.ConsistencyLevel_ONE)
		if err != nil {
			t.Fatalf("read back %s: %v", key, err)
		}
		have := map[string]string{}
		for _, c := range got {
			have[string(c.Column.Name)] = string(c.Column.Value)
		}
		for name, value := range want {
			if have[name] != value {
				missing++
				if missing <= 5 {
					t.Errorf("acknowledged write %s/%s = %q reads %q", key, name, value, have[name])
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged writes are missing", missing, len(acked))
	}
	t.Logf("%d acknowledged writes over %d rows read back", len(acked), len(byKey))
}

// probeAlive reports whether the child process still runs.
func probeAlive(cmd *exec.Cmd) error {
	if cmd.ProcessState != nil {
		return fmt.Errorf("exited: %v", cmd.ProcessState)
	}
	return cmd.Process.Signal(syscall.Signal(0))
}

// freeLoopbackAddr returns a loopback address nobody listens on now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
