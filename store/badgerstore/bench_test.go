package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"sync/atomic"
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
	// get-1cell is the engine's part of a Thrift get: a fresh result each
	// call, as the handler's.
	measure("get-1cell", 0, func(i int) error {
		var res store.SliceResult
		if err := f.e.Slice(ctx, tb, []byte("wide"), &store.SliceQuery{Count: 1, Names: [][]byte{name(i % 100)}}, &res); err != nil {
			return err
		}
		if res.Len() != 1 {
			return fmt.Errorf("get of column %d found %d cells", i%100, res.Len())
		}
		return nil
	})
	// slice-20cells-fresh is the engine's part of thriftbench's get_slice:
	// 20 cells into a fresh result each call, as the handler's.
	measure("slice-20cells-fresh", 0, func(int) error {
		var res store.SliceResult
		return f.e.Slice(ctx, tb, []byte("wide"), &store.SliceQuery{Count: 20}, &res)
	})
}

// BenchmarkApplyBatch measures the batches of cmd/thriftbench on a store
// on disk that already holds data, from as many goroutines as
// GOMAXPROCS×4 (a server's connections): a Standard row of 20 columns
// and a Super row of 10 super columns × 10 subcolumns, written into
// random rows of 20,000, so that some rows are new and some are
// overwritten, as in the load generator's runs. Values are zeros (the
// load generator repeats one random value in every column), except in
// the random kinds, whose values are distinct and do not compress.
func BenchmarkApplyBatch(b *testing.B) {
	for _, kind := range []struct {
		name          string
		super         bool
		supers, names int
		random        bool
	}{
		{"standard-20", false, 1, 20, false},
		{"super-10x10", true, 10, 10, false},
		{"super-10x10-random", true, 10, 10, true},
	} {
		b.Run(kind.name, func(b *testing.B) {
			f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
			tb := f.table(store.TableDef{Name: "cf", Super: kind.super, Comparator: "BytesType", SubComparator: "BytesType"})
			ctx := context.Background()
			rng := rand.New(rand.NewSource(1))
			values := make([][]byte, kind.supers*kind.names)
			for i := range values {
				values[i] = make([]byte, 64)
				if kind.random {
					for j := range values[i] {
						values[i][j] = byte(rng.Uint32())
					}
				}
			}
			const rows = 20000
			var names, supers, keys [][]byte
			for n := 0; n < kind.names; n++ {
				names = append(names, fmt.Appendf(nil, "c%05d", n))
			}
			for s := 0; s < kind.supers; s++ {
				if kind.super {
					supers = append(supers, fmt.Appendf(nil, "s%05d", s))
				} else {
					supers = append(supers, nil)
				}
			}
			for r := 0; r < rows; r++ {
				keys = append(keys, fmt.Appendf(nil, "w%09d", r))
			}
			// batch is what the handler gives the engine: the slices of
			// the decoded request, one allocation for the operations.
			batch := func(row, ts int) *store.Batch {
				ops := make([]store.Op, 0, len(supers)*len(names))
				for s, super := range supers {
					for n, name := range names {
						ops = append(ops, store.Op{Kind: store.OpPut, Super: super, Name: name,
							Value: values[s*len(names)+n], Timestamp: int64(ts), HasTimestamp: true})
					}
				}
				return &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: keys[row], Ops: ops}}}
			}
			loadRows(b, rows, func(row, ts int, _ *slab) error { return f.e.Apply(ctx, batch(row, ts)) })
		})
	}
}

// BenchmarkSuperBatchCeiling bounds the engine's 10 x 10 super batches
// (BenchmarkApplyBatch's) by what Badger itself costs for them, on stores
// that already hold half of the 20,000 rows, from GOMAXPROCS×4
// goroutines:
//
//   - engine: store.Engine.Apply, as thriftd calls it, on a packed
//     family (pack.go);
//   - engine-unpacked: the same on a family of one entry per subcolumn,
//     the layout of stores written before packs;
//   - badger-100-cells: the 100 keys and records of that layout set in
//     one transaction with nothing else (no row lock, no read, no
//     bookkeeping): its ceiling;
//   - badger-10-packs: the 10 packs of the packed layout, likewise: its
//     ceiling.
func BenchmarkSuperBatchCeiling(b *testing.B) {
	const rows = 20000
	value := make([]byte, 64)
	var supers, names, keys [][]byte
	for i := 0; i < 10; i++ {
		supers = append(supers, fmt.Appendf(nil, "s%05d", i))
		names = append(names, fmt.Appendf(nil, "c%05d", i))
	}
	for r := 0; r < rows; r++ {
		keys = append(keys, fmt.Appendf(nil, "w%09d", r))
	}
	ctx := context.Background()
	for _, kind := range []string{"engine", "engine-unpacked", "badger-100-cells", "badger-10-packs"} {
		b.Run(kind, func(b *testing.B) {
			f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
			f.e.unpackedSupers = kind != "engine"
			tb := f.table(store.TableDef{Name: "cf", Super: true, Comparator: "BytesType", SubComparator: "BytesType"})
			write := func(row, ts int, s *slab) error {
				if strings.HasPrefix(kind, "engine") {
					ops := make([]store.Op, 0, len(supers)*len(names))
					for _, super := range supers {
						for _, name := range names {
							ops = append(ops, store.Op{Kind: store.OpPut, Super: super, Name: name,
								Value: value, Timestamp: int64(ts), HasTimestamp: true})
						}
					}
					return f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: keys[row], Ops: ops}}})
				}
				s.reset()
				rp, _ := f.e.rowPrefix(nil, tb, keys[row])
				rec := record{timestamp: int64(ts), value: value}
				return f.e.db.Update(func(txn *badger.Txn) error {
					for _, super := range supers {
						if kind == "badger-10-packs" {
							cells := make([]packCell, 0, len(names))
							for _, name := range names {
								cells = append(cells, packCell{enc: tb.SubComparator.AppendKey(nil, name), rec: appendRecord(nil, &rec)})
							}
							if err := txn.Set(superPackKey(s, rp, tb, super), appendPack(nil, cells, false)); err != nil {
								return err
							}
							continue
						}
						for _, name := range names {
							k := cellKey(s, rp, tb, super, name)
							if err := txn.Set(k, appendRecord(s.scratch(recordSize(&rec)), &rec)); err != nil {
								return err
							}
						}
					}
					return nil
				})
			}
			loadRows(b, rows, write)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "batches/s")
		})
	}
}

// loadRows writes every other one of rows at timestamp 1, then measures
// write on rows picked across all of them, at rising timestamps, from
// GOMAXPROCS×4 goroutines (a server's connections), each with a slab of
// its own.
func loadRows(b *testing.B, rows int, write func(row, ts int, s *slab) error) {
	var fill slab
	for i := 0; i < rows; i += 2 {
		if err := write(i, 1, &fill); err != nil {
			b.Fatal(err)
		}
	}
	var seq atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var s slab
		for pb.Next() {
			i := int(seq.Add(1))
			if err := write((i*7919)%rows, 2+i, &s); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSuperSlice reads rows of 10 super columns of 10 subcolumns, a
// whole row and one super column of it, from a packed family and from an
// unpacked one (pack.go).
func BenchmarkSuperSlice(b *testing.B) {
	const rows = 1000
	ctx := context.Background()
	value := make([]byte, 64)
	for _, layout := range []string{"packed", "unpacked"} {
		b.Run(layout, func(b *testing.B) {
			f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
			f.e.unpackedSupers = layout == "unpacked"
			tb := f.table(store.TableDef{Name: "cf", Super: true, Comparator: "BytesType", SubComparator: "BytesType"})
			for r := 0; r < rows; r++ {
				ops := make([]store.Op, 0, 100)
				for s := 0; s < 10; s++ {
					for c := 0; c < 10; c++ {
						ops = append(ops, store.Op{Kind: store.OpPut, Super: fmt.Appendf(nil, "s%02d", s), Name: fmt.Appendf(nil, "c%02d", c),
							Value: value, Timestamp: 1, HasTimestamp: true})
					}
				}
				f.apply(store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "r%05d", r), Ops: ops})
			}
			var res store.SliceResult
			for _, q := range []struct {
				name string
				q    store.SliceQuery
			}{
				{"row", store.SliceQuery{Count: all}},
				{"super", store.SliceQuery{Super: []byte("s05"), Count: all}},
			} {
				b.Run(q.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						res.Reset()
						if err := f.e.Slice(ctx, tb, fmt.Appendf(nil, "r%05d", i%rows), &q.q, &res); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// BenchmarkSuperInsertOne writes one subcolumn at a time, each call to a
// random super column of 1000 rows × 4 that already hold some subcolumns
// (8: a pack, and a row pack of 32 cells; 40: past a pack's bounds, and
// a row pack's): the call that makes a pack, or a row pack, read and
// rewrite its super column or row, and that an unpacked family writes
// without a read.
func BenchmarkSuperInsertOne(b *testing.B) {
	const rows, supers = 1000, 4
	ctx := context.Background()
	value := make([]byte, 64)
	for _, filled := range []int{8, 40} {
		for _, layout := range []string{"row-packed", "packed", "unpacked"} {
			b.Run(fmt.Sprintf("%s-%d", layout, filled), func(b *testing.B) {
				f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
				f.e.unpackedSupers = layout == "unpacked"
				f.e.unpackedRows = layout != "row-packed"
				tb := f.table(store.TableDef{Name: "cf", Super: true, Comparator: "BytesType", SubComparator: "BytesType"})
				fillSuperRows(f, tb, rows, supers, filled, func(c int) []byte { return fmt.Appendf(nil, "c%03d", 2*c) }, value)
				var ts atomic.Int64
				ts.Store(time.Now().UnixMicro())
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					rng := rand.New(rand.NewSource(ts.Add(1)))
					for pb.Next() {
						// Overwrites of stored subcolumns: the pack keeps
						// its size.
						r, s, c := rng.Intn(rows), rng.Intn(supers), 2*rng.Intn(filled)
						op := store.Op{Kind: store.OpPut, Super: fmt.Appendf(nil, "s%02d", s), Name: fmt.Appendf(nil, "c%03d", c),
							Value: value, Timestamp: ts.Add(1), HasTimestamp: true}
						if err := f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: fmt.Appendf(nil, "r%05d", r), Ops: []store.Op{op}}}}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkSuperGetOne reads one subcolumn by name, each call from a
// random super column of 1000 rows of 10 super columns of 10 subcolumns
// of 64 bytes (a super batch of cmd/thriftbench): from a row pack, which
// the read takes whole, or from the super column's pack.
func BenchmarkSuperGetOne(b *testing.B) {
	const rows, supers, subs = 1000, 10, 10
	ctx := context.Background()
	value := make([]byte, 64)
	for _, layout := range []string{"row-packed", "packed"} {
		b.Run(layout, func(b *testing.B) {
			f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
			f.e.unpackedRows = layout != "row-packed"
			tb := f.table(store.TableDef{Name: "cf", Super: true, Comparator: "BytesType", SubComparator: "BytesType"})
			fillSuperRows(f, tb, rows, supers, subs, func(c int) []byte { return fmt.Appendf(nil, "c%02d", c) }, value)
			var seed atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewSource(seed.Add(1)))
				var out store.SliceResult
				for pb.Next() {
					q := store.SliceQuery{Super: fmt.Appendf(nil, "s%02d", rng.Intn(supers)), Names: [][]byte{fmt.Appendf(nil, "c%02d", rng.Intn(subs))}}
					out.Reset()
					if err := f.e.Slice(ctx, tb, fmt.Appendf(nil, "r%05d", rng.Intn(rows)), &q, &out); err != nil || len(out.Cells) != 1 {
						b.Errorf("%d cells, %v", len(out.Cells), err)
						return
					}
				}
			})
		})
	}
}

// fillSuperRows writes rows "r%05d" of family tb, each of supers super
// columns "s%02d" of the subcolumns name(0) to name(subs-1), all holding
// value at timestamp 1.
func fillSuperRows(f *fixture, tb *store.Table, rows, supers, subs int, name func(c int) []byte, value []byte) {
	for r := 0; r < rows; r++ {
		ops := make([]store.Op, 0, supers*subs)
		for s := 0; s < supers; s++ {
			for c := 0; c < subs; c++ {
				ops = append(ops, store.Op{Kind: store.OpPut, Super: fmt.Appendf(nil, "s%02d", s), Name: name(c),
					Value: value, Timestamp: 1, HasTimestamp: true})
			}
		}
		f.apply(store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "r%05d", r), Ops: ops})
	}
}

// BenchmarkScanPage measures a page of cmd/thriftbench's range mode: 10
// rows of 20 columns of 64 bytes from a random key on, over 10,000 such
// rows.
func BenchmarkScanPage(b *testing.B) {
	f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
	tb := f.table(store.TableDef{Name: "cf", Comparator: "BytesType"})
	ctx := context.Background()
	const rows, columns = preloadRows, preloadColumns
	keys := preload(b, f, tb)
	var res store.SliceResult
	i := 0
	for b.Loop() {
		i++
		n := 0
		q := &store.ScanQuery{Start: store.RowBound{Kind: store.BoundKey, Key: keys[(i*7919)%rows]}, Slice: store.SliceQuery{Count: columns}, Rows: 10}
		err := f.e.Scan(ctx, tb, q, &res, func([]byte) (bool, error) {
			res.Reset()
			n++
			return n < 10, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConcurrentInserts measures single-cell writes from 32
// goroutines at once, as a server's connections make them, into random
// rows of 100,000, and reports the share of them that committed in a
// transaction shared with others (group_commit.go).
func BenchmarkConcurrentInserts(b *testing.B) {
	f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
	tb := f.table(store.TableDef{Name: "cf", Comparator: "BytesType"})
	ctx := context.Background()
	value := make([]byte, 64)
	var ts atomic.Int64
	f.e.groupedWrites.Store(0)
	runLikeConnections(b, func(rng *rand.Rand) error {
		key := fmt.Appendf(nil, "row%06d", rng.Intn(100_000))
		op := store.Op{Kind: store.OpPut, Name: fmt.Appendf(nil, "c%02d", rng.Intn(20)), Value: value, Timestamp: ts.Add(1)}
		return f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: key, Ops: []store.Op{op}}}})
	})
	b.ReportMetric(float64(f.e.groupedWrites.Load())/float64(b.N), "shared/op")
}

// runLikeConnections runs call b.N times from 32 goroutines at once (as
// GOMAXPROCS allows), as a server's connections make calls, each with a
// random source of its own; the first error fails the benchmark.
func runLikeConnections(b *testing.B, call func(rng *rand.Rand) error) {
	var seed atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewSource(seed.Add(1)))
		for pb.Next() {
			if err := call(rng); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkConcurrentGets is thriftbench's get mode in process: 32
// goroutines (as GOMAXPROCS allows) read one column of random rows of the
// preloaded ones, and nothing is written meanwhile.
func BenchmarkConcurrentGets(b *testing.B) {
	f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
	tb := f.table(store.TableDef{Name: "cf", Comparator: "BytesType"})
	ctx := context.Background()
	keys := preload(b, f, tb)
	shared := f.e.snapshots.shared.Load()
	runLikeConnections(b, func(rng *rand.Rand) error {
		var res store.SliceResult
		key := keys[rng.Intn(len(keys))]
		q := &store.SliceQuery{Count: 1, Names: [][]byte{fmt.Appendf(nil, "c%05d", rng.Intn(preloadColumns))}}
		if err := f.e.Slice(ctx, tb, key, q, &res); err != nil || res.Len() != 1 {
			return fmt.Errorf("get %s: %d cells, %v", key, res.Len(), err)
		}
		return nil
	})
	b.ReportMetric(float64(f.e.snapshots.shared.Load()-shared)/float64(b.N), "shared/op")
}

// preloadRows rows of preloadColumns columns of 64 bytes, as thriftbench
// preloads them for its read modes.
const preloadRows, preloadColumns = 10_000, 20

// preload writes the preloaded rows into tb, 100 rows a batch, and
// returns their keys.
func preload(b *testing.B, f *fixture, tb *store.Table) [][]byte {
	b.Helper()
	value := make([]byte, 64)
	keys := make([][]byte, preloadRows)
	for r := 0; r < preloadRows; r += 100 {
		batch := &store.Batch{}
		for i := r; i < r+100; i++ {
			keys[i] = fmt.Appendf(nil, "p%09d", i)
			var ops []store.Op
			for c := range preloadColumns {
				ops = append(ops, store.Op{Kind: store.OpPut, Name: fmt.Appendf(nil, "c%05d", c), Value: value, Timestamp: 1})
			}
			batch.Rows = append(batch.Rows, store.RowMutation{Table: tb, Key: keys[i], Ops: ops})
		}
		if err := f.e.Apply(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// BenchmarkConcurrentCounterAdds is thriftbench's counter mode in
// process: 32 goroutines (as GOMAXPROCS allows) add 1 to a random counter
// of a random row, among 10,000 rows × 100 names, most of them never
// written before (key_filter.go), and reports the share of adds that
// read nothing.
func BenchmarkConcurrentCounterAdds(b *testing.B) {
	f := openTestEngine(b, b.TempDir(), "Murmur3Partitioner")
	tb := f.table(store.TableDef{Name: "c", Comparator: "BytesType", DefaultValidator: "CounterColumnType"})
	ctx := context.Background()
	runLikeConnections(b, func(rng *rand.Rand) error {
		key := fmt.Appendf(nil, "w%09d", rng.Intn(10_000))
		op := store.Op{Kind: store.OpCounterAdd, Name: fmt.Appendf(nil, "c%05d", rng.Intn(100)), Delta: 1}
		return f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: key, Ops: []store.Op{op}}}})
	})
	b.ReportMetric(float64(f.e.counterFilters.skipped.Load())/float64(b.N), "unread/op")
}
