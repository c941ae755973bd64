package cqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestConsistencyAndFailures runs the engine on the one-node Cassandra 5.0
// of CASSANDRA_TARGET_HOSTS at the levels a request's context carries: a
// level one node meets works, TWO and THREE are refused as unavailable
// (store.ErrUnavailable) and change nothing, a serial read reads, a
// deadline already past is a timeout (store.ErrTimeout), and a write the
// cluster refuses is a *store.CQLRefusedError with the cluster's reason.
func TestConsistencyAndFailures(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: cqlstore's consistency test needs CASSANDRA_TARGET_HOSTS (a Cassandra 5.0 node; test/cassandra/cassandra.sh start) !!!")
	}
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	run := "tbl" + hex.EncodeToString(id[:])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := Open(ctx, Options{Hosts: strings.Split(hosts, ","), MetaKeyspace: run + "_meta", KeyspacePrefix: run + "_",
		RefreshInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the keyspaces go, then the engine.
	t.Cleanup(func() { e.Close() })
	t.Cleanup(func() { dropPrefixed(t, e, run+"_") })
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "levels", Comparator: "UTF8Type"})
	write := func(ctx context.Context, name string, ttl int32) error {
		op := enginetest.Put(name, "v", 1)
		op.TTL = ttl
		return e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte("k"), Ops: []store.Op{op}}}})
	}
	read := func(ctx context.Context) (string, error) {
		var res store.SliceResult
		err := e.Slice(ctx, tb, []byte("k"), &store.SliceQuery{Count: 100}, &res)
		return enginetest.CellsString(res.Cells), err
	}
	at := func(c store.Consistency) context.Context { return store.WithConsistency(ctx, c) }

	for _, c := range []store.Consistency{store.ConsistencyDefault, store.ConsistencyOne, store.ConsistencyQuorum, store.ConsistencyAll, store.ConsistencyLocalOne, store.ConsistencyLocalQuorum, store.ConsistencyAny} {
		if err := write(at(c), "at-"+c.String(), 0); err != nil {
			t.Errorf("write at %s: %v", c, err)
		}
	}
	for _, c := range []store.Consistency{store.ConsistencyOne, store.ConsistencyAll, store.ConsistencySerial, store.ConsistencyLocalSerial, store.ConsistencyAny} {
		got, err := read(at(c))
		if err != nil || !strings.Contains(got, "at-ALL=v@1") {
			t.Errorf("read at %s: %q, %v", c, got, err)
		}
	}
	for _, c := range []store.Consistency{store.ConsistencyTwo, store.ConsistencyThree} {
		if err := write(at(c), "at-"+c.String(), 0); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("write at %s on one node: %v, want store.ErrUnavailable", c, err)
		}
		if _, err := read(at(c)); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("read at %s on one node: %v, want store.ErrUnavailable", c, err)
		}
	}
	if got, _ := read(ctx); strings.Contains(got, "at-TWO") || strings.Contains(got, "at-THREE") {
		t.Errorf("an unavailable write was applied: %s", got)
	}
	past, stop := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer stop()
	if err := write(past, "late", 0); !errors.Is(err, store.ErrTimeout) {
		t.Errorf("write past its deadline: %v, want store.ErrTimeout", err)
	}
	// Twenty years from now is past 2038: the cluster refuses the TTL.
	err = write(ctx, "far", 20*365*24*3600)
	var refused *store.CQLRefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Message, "exceeds maximum supported expiration date") {
		t.Errorf("a TTL past 2038: %v, want the cluster's refusal", err)
	}
}
