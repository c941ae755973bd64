package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// dropPassCounter is a log handler that counts Badger's DropPrefix calls.
type dropPassCounter struct{ passes atomic.Int64 }

func (c *dropPassCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *dropPassCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "DropPrefix called") {
		c.passes.Add(1)
	}
	return nil
}
func (c *dropPassCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *dropPassCounter) WithGroup(string) slog.Handler      { return c }

// TestDroppedKeyspaceIsRemovedInOnePass drops a keyspace of six families
// with data, some indexed: their data leaves the store, in one DropPrefix
// (Badger blocks every write during each).
func TestDroppedKeyspaceIsRemovedInOnePass(t *testing.T) {
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	counter := &dropPassCounter{}
	e, err := Open(context.Background(), Options{Dir: t.TempDir(), Partitioner: p, Logger: slog.New(counter), GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })

	var ids []uint32
	for i := range 6 {
		def := store.TableDef{Name: fmt.Sprintf("F%d", i), Comparator: "UTF8Type"}
		if i == 5 {
			// A packed family: its rows have marks (rowmark.go).
			def.Super, def.SubComparator = true, "UTF8Type"
		}
		if i%2 == 0 {
			keys, name := int32(0), fmt.Sprintf("i%d", i)
			def.Columns = []store.ColumnDef{{Name: []byte("v"), Validator: "UTF8Type", IndexType: &keys, IndexName: &name}}
		}
		tb := enginetest.CreateTable(t, e, def)
		ids = append(ids, dataIDOf(tb))
		for r := range 50 {
			op := enginetest.Put("v", fmt.Sprintf("value%d", r%5), 1)
			if def.Super {
				op = enginetest.PutSuper("s", "v", "value", 1)
			}
			enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "row%d", r), Ops: []store.Op{op}})
		}
	}
	// The writes are acknowledged before they are applied (deferred.go):
	// the entries are counted once they are.
	if err := e.settleAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := prefixedEntries(t, e, ids); n == 0 {
		t.Fatal("the families' data is not in the store before the drop")
	}
	if n := prefixedEntries(t, e, ids[5:]); n != 100 {
		t.Fatalf("the packed family has %d entries, want 50 packs and 50 row marks", n)
	}
	before := counter.passes.Load()
	if err := e.DropKeyspace(context.Background(), "ks"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, _, pending := e.pendingDrops(); !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the drop is still pending after 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := prefixedEntries(t, e, ids); n != 0 {
		t.Errorf("%d entries of the dropped families are left", n)
	}
	if passes := counter.passes.Load() - before; passes != 1 {
		t.Errorf("the drop took %d DropPrefix passes, want 1", passes)
	}
}

// prefixedEntries counts the store's entries under the data, index and
// row mark prefixes of the data ids.
func prefixedEntries(t *testing.T, e *Engine, ids []uint32) int {
	t.Helper()
	n := 0
	err := e.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			for _, ns := range []byte{nsData, nsIndex, nsRowMarks} {
				prefix := binary.BigEndian.AppendUint32([]byte{ns}, id)
				it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
				for it.Rewind(); it.Valid(); it.Next() {
					n++
				}
				it.Close()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
