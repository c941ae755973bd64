package legacy_test

import (
	"errors"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestClusterConsistencyLevels: the level of each Thrift data call reaches
// the cluster. On the one-node Cassandra 5.0, ONE and ALL (of replication
// factor 1) are met; TWO and THREE are not, and the calls answer
// UnavailableException, as Cassandra 3.11 answers on its own single node:
// nothing is written, and the connection goes on.
func TestClusterConsistencyLevels(t *testing.T) {
	td := startClusterThriftd(t, legacy.HandlerConfig{})
	sides := map[string]string{"thriftd on Cassandra 5.0": td.addr}
	if ref := referenceThrift(t); ref != "" {
		sides["Cassandra 3.11"] = ref
	}
	for name, addr := range sides {
		c := dial(t, addr)
		addKeyspace(t, c, testcluster.Keyspace("tb_levels"))
		parent := &cassandra.ColumnParent{ColumnFamily: "Standard1"}
		path := &cassandra.ColumnPath{ColumnFamily: "Standard1", Column: []byte("c")}
		ts := int64(1)
		insert := func(key string, cl cassandra.ConsistencyLevel) error {
			return c.Insert(callCtx(t), []byte(key), parent, &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}, cl)
		}
		for _, cl := range []cassandra.ConsistencyLevel{cassandra.ConsistencyLevel_ONE, cassandra.ConsistencyLevel_ALL, cassandra.ConsistencyLevel_QUORUM, cassandra.ConsistencyLevel_LOCAL_ONE} {
			if err := insert("k-"+cl.String(), cl); err != nil {
				t.Errorf("%s: insert at %v: %v", name, cl, err)
			}
			if _, err := c.Get(callCtx(t), []byte("k-"+cl.String()), path, cl); err != nil {
				t.Errorf("%s: get at %v: %v", name, cl, err)
			}
		}
		for _, cl := range []cassandra.ConsistencyLevel{cassandra.ConsistencyLevel_TWO, cassandra.ConsistencyLevel_THREE} {
			if got := exceptionOf(insert("never", cl)); got != "UnavailableException" {
				t.Errorf("%s: insert at %v: %s, want UnavailableException", name, cl, got)
			}
			if _, err := c.GetSlice(callCtx(t), []byte("k-ONE"), parent, &cassandra.SlicePredicate{ColumnNames: [][]byte{[]byte("c")}}, cl); exceptionOf(err) != "UnavailableException" {
				t.Errorf("%s: get_slice at %v: %s, want UnavailableException", name, cl, exceptionOf(err))
			}
			mutation := map[string]map[string][]*cassandra.Mutation{"never": {"Standard1": {{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}}}}}}
			if got := exceptionOf(c.BatchMutate(callCtx(t), mutation, cl)); got != "UnavailableException" {
				t.Errorf("%s: batch_mutate at %v: %s, want UnavailableException", name, cl, got)
			}
		}
		// cas carries its serial level to the Paxos round and its commit
		// level to the commit.
		for _, serial := range []cassandra.ConsistencyLevel{cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_LOCAL_SERIAL} {
			next := []byte("w-" + serial.String())
			res, err := c.Cas(callCtx(t), []byte("k-ONE"), "Standard1",
				[]*cassandra.Column{{Name: []byte("c"), Value: current(t, c, path)}},
				[]*cassandra.Column{{Name: []byte("c"), Value: next, Timestamp: &ts}}, serial, cassandra.ConsistencyLevel_ONE)
			if err != nil || !res.Success {
				t.Errorf("%s: cas at %v: %+v, %v", name, serial, res, err)
			}
		}
		// A commit level the cluster cannot meet: Cassandra 5.0 refuses
		// the transaction before its Paxos round (UnavailableException,
		// nothing applied); 3.11 commits on the replica it has and times
		// out waiting for the others (TimedOutException, applied). thriftd
		// answers what its cluster does.
		before := current(t, c, path)
		_, err := c.Cas(callCtx(t), []byte("k-ONE"), "Standard1", []*cassandra.Column{{Name: []byte("c"), Value: before}},
			[]*cassandra.Column{{Name: []byte("c"), Value: []byte("x"), Timestamp: &ts}}, cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_THREE)
		if name == "Cassandra 3.11" {
			if got := exceptionOf(err); got != "TimedOutException" {
				t.Errorf("%s: cas committed at THREE: %s, want TimedOutException", name, got)
			}
		} else if got := exceptionOf(err); got != "UnavailableException" || string(current(t, c, path)) != string(before) {
			t.Errorf("%s: cas committed at THREE: %s, value %q; want UnavailableException and %q unchanged", name, got, current(t, c, path), before)
		}
		var nf *cassandra.NotFoundException
		if _, err := c.Get(callCtx(t), []byte("never"), path, cassandra.ConsistencyLevel_ONE); !errors.As(err, &nf) {
			t.Errorf("%s: after the refused writes, get answers %v, want NotFoundException", name, err)
		}
	}
}

// current is the value of the column at path of row k-ONE.
func current(t *testing.T, c *conformance.Client, path *cassandra.ColumnPath) []byte {
	t.Helper()
	got, err := c.Get(callCtx(t), []byte("k-ONE"), path, cassandra.ConsistencyLevel_ONE)
	if err != nil {
		t.Fatalf("%s: get: %v", c.Addr, err)
	}
	return got.Column.Value
}
