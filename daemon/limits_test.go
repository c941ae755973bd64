package daemon_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestMaxConnections: a connection beyond max_connections is closed and
// logged; once a client leaves, a new one is served.
func TestMaxConnections(t *testing.T) {
	cfg := daemontest.Config(t)
	cfg.MaxConnections = 2
	d, logs := startLogged(t, cfg)
	addr := d.Addr().String()
	ctx := testContext(t)

	first := mustDialThrift(t, addr, nil)
	second := mustDialThrift(t, addr, nil)
	for _, c := range []*thriftClient{first, second} {
		if _, err := c.DescribeVersion(ctx); err != nil {
			t.Fatal(err)
		}
	}
	third := mustDialThrift(t, addr, nil)
	if v, err := third.DescribeVersion(ctx); err == nil {
		t.Fatalf("a third connection was served (%q) with max_connections 2", v)
	}
	if !strings.Contains(logs.String(), "max_connections reached") {
		t.Errorf("the refusal was not logged:\n%s", logs)
	}
	if _, err := first.DescribeVersion(ctx); err != nil {
		t.Fatalf("a served client after the refusal: %v", err)
	}
	_ = second.tr.Close()
	waitFor(t, "a connection to be served again", func() bool {
		c, err := dialThrift(t, addr, nil)
		if err != nil {
			return false
		}
		_, err = c.DescribeVersion(ctx)
		return err == nil
	})
}

// TestIdleTimeout: a client that sends nothing, or half a frame, is
// dropped after the idle timeout; the server goes on serving.
func TestIdleTimeout(t *testing.T) {
	cfg := daemontest.Config(t)
	cfg.ClientIdleTimeoutMS = 100
	d, logs := startLogged(t, cfg)
	addr := d.Addr().String()

	halfFrame := make([]byte, 4+10)
	binary.BigEndian.PutUint32(halfFrame, 100)
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"silent", nil},
		{"half a frame", halfFrame},
	} {
		nc, err := net.DialTimeout("tcp", addr, hardeningTimeout)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(tc.send); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_ = nc.SetReadDeadline(time.Now().Add(hardeningTimeout))
		n, err := nc.Read(make([]byte, 1))
		elapsed := time.Since(start)
		nc.Close()
		if n != 0 || !errors.Is(err, io.EOF) && !isReset(err) {
			t.Errorf("%s: read %d bytes, %v; want the server to close", tc.name, n, err)
		}
		if elapsed > 5*time.Second {
			t.Errorf("%s: dropped after %v with a 100ms idle timeout", tc.name, elapsed)
		}
	}
	if got := strings.Count(logs.String(), "idle past the idle timeout"); got != 2 {
		t.Errorf("%d idle drops logged, want 2:\n%s", got, logs)
	}
	// A client that keeps talking is served, across several idle periods.
	c := mustDialThrift(t, addr, nil)
	for range 3 {
		if _, err := c.DescribeVersion(testContext(t)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// setUpRows creates keyspace KS with family CF holding n rows of one
// column each.
func setUpRows(t *testing.T, c *thriftClient, n int) {
	t.Helper()
	ctx := testContext(t)
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = "KS", "CF"
	ks := cassandra.NewKsDef()
	ks.Name, ks.StrategyClass, ks.CfDefs = "KS", "SimpleStrategy", []*cassandra.CfDef{cf}
	ks.StrategyOptions = map[string]string{"replication_factor": "1"}
	if _, err := c.SystemAddKeyspace(ctx, ks); err != nil {
		t.Fatal(err)
	}
	if err := c.SetKeyspace(ctx, "KS"); err != nil {
		t.Fatal(err)
	}
	for start := 0; start < n; start += 500 {
		batch := map[string]map[string][]*cassandra.Mutation{}
		for i := start; i < min(n, start+500); i++ {
			col := &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: thrift.Int64Ptr(1)}
			batch[fmt.Sprintf("row%05d", i)] = map[string][]*cassandra.Mutation{"CF": {{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: col}}}}
		}
		if err := c.BatchMutate(ctx, batch, cassandra.ConsistencyLevel_ONE); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRequestTimeout: a range read longer than range_request_timeout_in_ms
// is answered TimedOutException, and the connection goes on.
func TestRequestTimeout(t *testing.T) {
	cfg := daemontest.Config(t)
	cfg.RangeRequestTimeoutMS = 1
	d, _ := startLogged(t, cfg)
	c := mustDialThrift(t, d.Addr().String(), nil)
	setUpRows(t, c, 5000)
	ctx := testContext(t)

	all := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100}}
	_, err := c.GetRangeSlices(ctx, &cassandra.ColumnParent{ColumnFamily: "CF"}, all,
		&cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 100000}, cassandra.ConsistencyLevel_ONE)
	var timedOut *cassandra.TimedOutException
	if !errors.As(err, &timedOut) {
		t.Fatalf("a 5000-row scan with a 1ms timeout: %v, want TimedOutException", err)
	}
	// Reads of one row have their own, default, timeout.
	if n, err := c.GetCount(ctx, []byte("row00001"), &cassandra.ColumnParent{ColumnFamily: "CF"}, all, cassandra.ConsistencyLevel_ONE); err != nil || n != 1 {
		t.Fatalf("get_count after the timeout: %d, %v", n, err)
	}
}

// TestHugeCountsDoNotPreallocate: slices and ranges with the largest
// counts are answered with what exists, without allocating for the count.
func TestHugeCountsDoNotPreallocate(t *testing.T) {
	d, _ := startLogged(t, daemontest.Config(t))
	c := mustDialThrift(t, d.Addr().String(), nil)
	setUpRows(t, c, 10)
	ctx := testContext(t)
	parent := &cassandra.ColumnParent{ColumnFamily: "CF"}
	huge := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: math.MaxInt32}}
	keys := &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: math.MaxInt32}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if cols, err := c.GetSlice(ctx, []byte("row00001"), parent, huge, cassandra.ConsistencyLevel_ONE); err != nil || len(cols) != 1 {
		t.Errorf("get_slice: %d columns, %v", len(cols), err)
	}
	if rows, err := c.MultigetSlice(ctx, [][]byte{[]byte("row00001"), []byte("row00002")}, parent, huge, cassandra.ConsistencyLevel_ONE); err != nil || len(rows) != 2 {
		t.Errorf("multiget_slice: %d rows, %v", len(rows), err)
	}
	if rows, err := c.GetRangeSlices(ctx, parent, huge, keys, cassandra.ConsistencyLevel_ONE); err != nil || len(rows) != 10 {
		t.Errorf("get_range_slices: %d rows, %v", len(rows), err)
	}
	if rows, err := c.GetPagedSlice(ctx, "CF", keys, []byte{}, cassandra.ConsistencyLevel_ONE); err != nil || len(rows) != 10 {
		t.Errorf("get_paged_slice: %d rows, %v", len(rows), err)
	}
	multi := &cassandra.MultiSliceRequest{Key: []byte("row00001"), ColumnParent: parent,
		ColumnSlices: []*cassandra.ColumnSlice{{Start: []byte{}, Finish: []byte{}}}, Count: math.MaxInt32, ConsistencyLevel: cassandra.ConsistencyLevel_ONE}
	if cols, err := c.GetMultiSlice(ctx, multi); err != nil || len(cols) != 1 {
		t.Errorf("get_multi_slice: %d columns, %v", len(cols), err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the calls allocated %d MiB", grew>>20)
	}
}

// panicOn panics in describe_keyspaces: a handler bug, injected through the
// test-only seam.
type panicOn struct{ cassandra.Cassandra }

func (panicOn) DescribeKeyspaces(context.Context) ([]*cassandra.KsDef, error) {
	panic("injected failure")
}

// TestPanicIsRecovered: a panic in a call is logged with the method name
// and answered TApplicationException INTERNAL_ERROR; the connection and
// the server go on.
func TestPanicIsRecovered(t *testing.T) {
	d, logs := startLogged(t, daemontest.Config(t), daemon.WithHandlerWrapper(func(h cassandra.Cassandra) cassandra.Cassandra {
		return panicOn{h}
	}))
	addr := d.Addr().String()
	ctx := testContext(t)
	c := mustDialThrift(t, addr, nil)
	_, err := c.DescribeKeyspaces(ctx)
	var appErr thrift.TApplicationException
	if !errors.As(err, &appErr) || appErr.TypeId() != thrift.INTERNAL_ERROR || !strings.Contains(appErr.Error(), "describe_keyspaces") {
		t.Fatalf("describe_keyspaces: %v, want TApplicationException INTERNAL_ERROR naming the method", err)
	}
	if !strings.Contains(logs.String(), `msg="thrift handler panicked"`) || !strings.Contains(logs.String(), "method=describe_keyspaces") {
		t.Errorf("the panic was not logged with the method:\n%s", logs)
	}
	if _, err := c.DescribeVersion(ctx); err != nil {
		t.Fatalf("the connection after the panic: %v", err)
	}
	if _, err := mustDialThrift(t, addr, nil).DescribeClusterName(ctx); err != nil {
		t.Fatalf("a new connection after the panic: %v", err)
	}
}
