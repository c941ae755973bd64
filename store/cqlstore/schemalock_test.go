package cqlstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/store"
)

// TestSchemaChangesOfTwoInstances: two engines on one cluster (two
// thriftd instances) creating the same families at the same moment make
// each family once: one creation succeeds, the other is told it exists,
// and both catalogs end with the one definition.
func TestSchemaChangesOfTwoInstances(t *testing.T) {
	for _, c := range testcluster.Require(t, "schema changes of two instances") {
		t.Run(c.Name, func(t *testing.T) { testSchemaChangesOfTwoInstances(t, c) })
	}
}

func testSchemaChangesOfTwoInstances(t *testing.T, c testcluster.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	prefix := testcluster.Keyspace("tb_lease") + "_"
	var engines [2]*Engine
	for i := range engines {
		e, err := Open(ctx, Options{Hosts: c.Hosts, MetaKeyspace: prefix + "meta", KeyspacePrefix: prefix,
			RefreshInterval: -1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		engines[i] = e
		t.Cleanup(func() { e.Close() })
	}
	t.Cleanup(func() { dropPrefixed(t, engines[0], prefix) })
	ks := store.KeyspaceDef{Name: "ks", StrategyClass: "org.apache.cassandra.locator.SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, DurableWrites: true}
	if err := engines[0].CreateKeyspace(ctx, ks, nil); err != nil {
		t.Fatal(err)
	}
	const families = 3
	for f := range families {
		name := fmt.Sprintf("cf%d", f)
		var wg sync.WaitGroup
		var errs [2]error
		for i, e := range engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = e.CreateTable(ctx, store.TableDef{Keyspace: "ks", Name: name, Comparator: fmt.Sprintf("%sType", []string{"UTF8", "Bytes"}[i])})
			}()
		}
		wg.Wait()
		created := 0
		for i, err := range errs {
			switch {
			case err == nil:
				created++
			case errors.Is(err, store.ErrExists):
			default:
				t.Fatalf("%s on engine %d: %v", name, i, err)
			}
		}
		if created != 1 {
			t.Fatalf("%s: created by %d engines (%v), want 1", name, created, errs)
		}
		winner := 0
		if errs[0] != nil {
			winner = 1
		}
		for i, e := range engines {
			if err := e.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			tb, ok := e.Catalog().Table("ks", name)
			if !ok {
				t.Fatalf("%s missing from engine %d's catalog", name, i)
			}
			if want := []string{"UTF8Type", "BytesType"}[winner]; tb.Def.Comparator != want {
				t.Errorf("engine %d: %s compares with %s, want the creator's %s", i, name, tb.Def.Comparator, want)
			}
		}
	}
}
