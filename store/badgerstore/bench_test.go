package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// BenchmarkEngine compares the engine with the ceiling of the same Badger
// database doing the bare minimum for the same work: a write transaction
// that reads and writes one key (what reconciling one cell costs), and an
// iteration over 100 keys (what a 100-column slice costs). Each ceiling
// runs before the operation it bounds, which reports its rate as a
// fraction of the ceiling's (x-of-ceiling), when the ceiling ran: -bench
// may select the operation alone.
func BenchmarkEngine(b *testing.B) {
	f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
	tb := f.table(store.TableDef{Name: "cf", Comparator: "LongType"})
	ctx := context.Background()
	value := make([]byte, 32)
	name := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

	var ops []store.Op
	for i := 0; i < 100; i++ {
		ops = append(ops, store.Op{Kind: store.OpPut, Name: name(i), Value: value, Timestamp: 1})
	}
	if err := f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte("wide"), Ops: ops}}}); err != nil {
		b.Fatal(err)
	}
	rawKey := func(i int) []byte { return append([]byte{0x7f, 'r', 'a', 'w'}, name(i)...) }
	for i := 0; i < 100; i++ {
		if err := f.e.db.Update(func(txn *badger.Txn) error { return txn.Set(rawKey(i), value) }); err != nil {
			b.Fatal(err)
		}
	}

	// measure runs fn as the sub-benchmark name and reports its rate and,
	// when ceiling (the rate of the ceiling that bounds it) is known, the
	// rate as a fraction of the ceiling's. It returns the rate, 0 when
	// -bench did not select name.
	measure := func(name string, ceiling float64, fn func(i int) error) float64 {
		var rate float64
		b.Run(name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := fn(i); err != nil {
					b.Fatal(err)
				}
			}
			rate = float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(rate, "ops/s")
			if ceiling > 0 {
				b.ReportMetric(rate/ceiling, "x-of-ceiling")
			}
		})
		return rate
	}
	writeCeiling := measure("raw-write-ceiling", 0, func(i int) error {
		return f.e.db.Update(func(txn *badger.Txn) error {
			k := append([]byte{0x7f, 'w'}, name(i)...)
			if _, err := txn.Get(k); err != nil && err != badger.ErrKeyNotFound {
				return err
			}
			return txn.Set(k, value)
		})
	})
	measure("apply-1cell", writeCeiling, func(i int) error {
		return f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte(fmt.Sprintf("r%d", i%1000)),
			Ops: []store.Op{{Kind: store.OpPut, Name: name(i), Value: value, Timestamp: int64(i)}}}}})
	})
	iterateCeiling := measure("raw-iterate-100-ceiling", 0, func(int) error {
		return f.e.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{0x7f, 'r', 'a', 'w'}})
			defer it.Close()
			n := 0
			for it.Rewind(); it.Valid() && n < 100; it.Next() {
				if _, err := it.Item().ValueCopy(nil); err != nil {
					return err
				}
				n++
			}
			return nil
		})
	})
	var res store.SliceResult
	measure("slice-100cells", iterateCeiling, func(int) error {
		res.Reset()
		return f.e.Slice(ctx, tb, []byte("wide"), &store.SliceQuery{Count: 100}, &res)
	})
}
