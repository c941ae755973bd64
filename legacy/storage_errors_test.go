package legacy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// failingEngine serves a fixed catalog and fails writes and family
// updates with the errors it is given. Other methods are not used.
type failingEngine struct {
	store.Engine
	cat       *store.Catalog
	applyErr  error
	updateErr error
}

func (e *failingEngine) Catalog() *store.Catalog                           { return e.cat }
func (e *failingEngine) Apply(context.Context, *store.Batch) error         { return e.applyErr }
func (e *failingEngine) UpdateTable(context.Context, store.TableDef) error { return e.updateErr }

func newFailingEngine(t *testing.T) *failingEngine {
	t.Helper()
	tables := map[string]*store.Table{}
	for i, def := range []store.TableDef{
		{Keyspace: "ks", Name: "Counter1", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"},
		{Keyspace: "ks", Name: "Standard1", Comparator: "LongType"},
	} {
		def.ID = int32(1000 + i)
		tb, err := store.NewTable(def)
		if err != nil {
			t.Fatal(err)
		}
		tables[def.Name] = tb
	}
	return &failingEngine{cat: &store.Catalog{Version: "v1", Keyspaces: map[string]*store.Keyspace{
		"ks": {Def: store.KeyspaceDef{Name: "ks", StrategyClass: "org.apache.cassandra.locator.SimpleStrategy"}, Tables: tables},
	}}}
}

// badgerConflictText is the text Badger gives a lost write conflict.
const badgerConflictText = "Transaction Conflict. Please retry"

// TestStorageFailuresAreTimeoutsWithoutLibraryText: a write the engine
// gives up on, or that fails in the storage library, reaches the client as
// TimedOutException (as Cassandra answers a failed or timed-out write over
// Thrift), never as an internal error carrying the library's message.
func TestStorageFailuresAreTimeoutsWithoutLibraryText(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"engine gave up", fmt.Errorf("%w: gave up after 64 attempts that lost to concurrent writers", store.ErrTimeout)},
		{"storage library failure", fmt.Errorf("apply mutation: gave up after 64 conflicting attempts: %w", errors.New(badgerConflictText))},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFailingEngine(t)
			e.applyErr = c.err
			var logs strings.Builder
			h := NewHandler(e, HandlerConfig{}, slog.New(slog.NewTextHandler(&logs, nil)))
			s := NewSession(1, nil)
			s.SetKeyspace("ks")
			ctx := WithSession(context.Background(), s)

			err := h.Add(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: "Counter1"},
				&cassandra.CounterColumn{Name: []byte("n"), Value: 1}, cassandra.ConsistencyLevel_ONE)
			var te *cassandra.TimedOutException
			if !errors.As(err, &te) {
				t.Errorf("add: %v (%T), want TimedOutException", err, err)
			}
			ts := int64(1)
			err = h.Insert(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: "Standard1"},
				&cassandra.Column{Name: make([]byte, 8), Value: []byte("v"), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE)
			if !errors.As(err, &te) {
				t.Errorf("insert: %v (%T), want TimedOutException", err, err)
			}
			if err != nil && strings.Contains(err.Error(), "Conflict") {
				t.Errorf("the storage library's text reached the client: %v", err)
			}
			if !strings.Contains(logs.String(), "gave up") {
				t.Errorf("the failure was not logged with its cause; logs:\n%s", logs.String())
			}
		})
	}
}

// TestRefusedFamilyUpdateIsInvalidRequest: the engine's refusal of a
// change its stored data depends on is answered InvalidRequestException
// with Cassandra's reason; any other engine failure of a schema change is
// an internal error without the engine's text.
func TestRefusedFamilyUpdateIsInvalidRequest(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		ire  string // the reason; "" for an internal error
	}{
		{"comparator", &store.IncompatibleChangeError{Keyspace: "ks", Table: "Standard1", Property: store.PropComparator, Old: "LongType", New: "BytesType"},
			"comparators do not match or are not compatible."},
		{"subcomparator", &store.IncompatibleChangeError{Keyspace: "ks", Table: "Standard1", Property: store.PropSubComparator},
			"subcolumncomparators do not match or are not compatible."},
		{"column type", fmt.Errorf("update: %w", &store.IncompatibleChangeError{Keyspace: "ks", Table: "Standard1", Property: store.PropColumnType}),
			"types do not match."},
		{"counter", &store.IncompatibleChangeError{Keyspace: "ks", Table: "Standard1", Property: store.PropCounter},
			"types do not match."},
		{"indexed validator", &store.IncompatibleChangeError{Keyspace: "ks", Table: "Standard1", Property: store.PropIndexedValidator, Column: make([]byte, 8), Old: "LongType", New: "BytesType"},
			"Cannot change the validation class of indexed column 0 from LongType to BytesType: drop its index first"},
		{"storage failure", fmt.Errorf("persist schema: %w", errors.New(badgerConflictText)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFailingEngine(t)
			e.updateErr = c.err
			h := NewHandler(e, HandlerConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			cf := cassandra.NewCfDef()
			cf.Keyspace, cf.Name, cf.ComparatorType = "ks", "Standard1", "LongType"
			_, err := h.SystemUpdateColumnFamily(context.Background(), cf)
			var ire *cassandra.InvalidRequestException
			switch {
			case c.ire != "":
				if !errors.As(err, &ire) || ire.Why != c.ire {
					t.Errorf("system_update_column_family: %v, want InvalidRequestException(%q)", err, c.ire)
				}
			case err == nil || errors.As(err, &ire):
				t.Errorf("system_update_column_family: %v, want an internal error", err)
			case strings.Contains(err.Error(), "Conflict"):
				t.Errorf("the storage library's text reached the client: %v", err)
			}
		})
	}
}
