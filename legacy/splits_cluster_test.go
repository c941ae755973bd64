package legacy_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// splitsOf writes rows into Standard1 of a new keyspace and asks for its
// splits of the whole ring.
func splitsOf(t *testing.T, c *conformance.Client, rows int) ([]*cassandra.CfSplit, []string) {
	t.Helper()
	addKeyspace(t, c, testcluster.Keyspace("tb_splits"))
	ts := int64(1)
	for i := range rows {
		col := &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}
		if err := c.Insert(callCtx(t), []byte(fmt.Sprintf("row%d", i)), &cassandra.ColumnParent{ColumnFamily: "Standard1"}, col, cassandra.ConsistencyLevel_ONE); err != nil {
			t.Fatalf("%s: insert: %v", c.Addr, err)
		}
	}
	ex, err := c.DescribeSplitsEx(callCtx(t), "Standard1", "0", "0", 10)
	if err != nil {
		t.Fatalf("%s: describe_splits_ex: %v", c.Addr, err)
	}
	tokens, err := c.DescribeSplits(callCtx(t), "Standard1", "0", "0", 10)
	if err != nil {
		t.Fatalf("%s: describe_splits: %v", c.Addr, err)
	}
	return ex, tokens
}

// TestClusterSplitsWithoutEstimates: rows still in memtables have no size
// estimate yet; thriftd over Cassandra 5.0 answers then as Cassandra 3.11
// answers for its own unflushed rows.
func TestClusterSplitsWithoutEstimates(t *testing.T) {
	td := startClusterThriftd(t, legacy.HandlerConfig{})
	got, gotTokens := splitsOf(t, dial(t, td.addr), 25)
	if len(got) == 0 || got[0].StartToken != "0" || got[len(got)-1].EndToken != "0" {
		t.Fatalf("splits %v do not cover (0, 0]", got)
	}
	for _, bad := range []func() error{
		func() error {
			_, err := dial(t, td.addr).DescribeSplitsEx(callCtx(t), "Standard1", "0", "0", 10)
			return err
		},
	} {
		if _, ok := bad().(*cassandra.InvalidRequestException); !ok {
			t.Error("describe_splits_ex without a keyspace: want InvalidRequestException")
		}
	}
	ref := referenceThrift(t)
	if ref == "" {
		return
	}
	want, wantTokens := splitsOf(t, dial(t, ref), 25)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("describe_splits_ex differs:\n thriftd:        %v\n Cassandra 3.11: %v", got, want)
	}
	if !reflect.DeepEqual(gotTokens, wantTokens) {
		t.Errorf("describe_splits differs:\n thriftd:        %v\n Cassandra 3.11: %v", gotTokens, wantTokens)
	}
}
