package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Rows without a header. A read of a row first looks for its header (a
// row deletion, the flag of range tombstones, a long key), which most rows
// never have: that point read was a fifth of thriftd's CPU under
// single-column gets. The engine keeps a filter of the rows that may have
// one: a bit per hash of the row prefix, set (in memory, then in the
// store, in the transaction that writes the header) before any header of
// a row with that hash commits, and never cleared. A read that finds its
// row's bit clear skips the header.
//
// A reader checks the bit after its transaction began: a header in the
// transaction's snapshot committed before that, so its bit was set before
// too. The bits are keys of the store (headerBitKey), so they survive a
// restart and are in backups; headerMarkerKey says the bits are complete.
// A store written before there were bits opens with every row taken as
// having a header and finds its headers by one scan in the background.

// headerBits is the number of bits of the filter (8 KiB): with n rows
// that have headers, about 1 - e^(-n/65536) of the rows are read with
// their header lookup.
const headerBits = 1 << 16

var (
	// headerMarkerKey is present once the stored bits are complete.
	headerMarkerKey = []byte{nsSchema, schemaMeta, 'h', 'd', 'r', 's'}
	// headerBitPrefix starts the key of each bit set.
	headerBitPrefix = []byte{nsSchema, schemaMeta, 'h', 'b'}
)

func headerBitKey(i uint16) []byte {
	return append(append([]byte{}, headerBitPrefix...), byte(i>>8), byte(i))
}

// headerBit is the bit of the row with prefix rp: FNV-1a, folded to 16
// bits, the same in every process.
func headerBit(rp []byte) uint16 {
	h := uint32(2166136261)
	for _, b := range rp {
		h ^= uint32(b)
		h *= 16777619
	}
	return uint16(h ^ h>>16)
}

// headerFilter is the set of bits of the rows that may have a header.
type headerFilter struct {
	// known: the bits are complete; until then (and in a zero filter)
	// every row may have a header.
	known atomic.Bool
	bits  [headerBits / 64]atomic.Uint64
}

// mayHave reports whether the row with prefix rp may have a header.
func (f *headerFilter) mayHave(rp []byte) bool {
	if f == nil || !f.known.Load() {
		return true
	}
	i := headerBit(rp)
	return f.bits[i/64].Load()&(1<<(i%64)) != 0
}

func (f *headerFilter) set(i uint16) { f.bits[i/64].Or(1 << (i % 64)) }

// noteHeader records, before the transaction that writes a header of the
// row with prefix rp commits, that the row may have one.
func (w *writer) noteHeader(rp []byte) error {
	i := headerBit(rp)
	w.e.headers.set(i)
	return w.set(headerBitKey(i), nil)
}

// loadHeaderFilter reads the bits at open; a store with rows and no
// complete bits is scanned in the background, every row taken as having
// a header until the scan ends.
func (e *Engine) loadHeaderFilter(empty bool) error {
	complete := false
	err := e.db.View(func(txn *badger.Txn) error {
		if _, err := txn.Get(headerMarkerKey); err == nil {
			complete = true
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: headerBitPrefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) == len(headerBitPrefix)+2 {
				e.headers.set(uint16(k[len(k)-2])<<8 | uint16(k[len(k)-1]))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the header filter: %w", err)
	}
	switch {
	case complete:
		e.headers.known.Store(true)
	case empty:
		if err := e.update(func(txn *badger.Txn) error { return txn.Set(headerMarkerKey, nil) }); err != nil {
			return fmt.Errorf("record the header filter: %w", err)
		}
		e.headers.known.Store(true)
	default:
		e.background(func(ctx context.Context) {
			if err := e.findHeaders(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("every read looks for its row's header until the store's headers are listed", "err", err)
			}
		})
	}
	return nil
}

// findHeaders lists the row headers of a store without complete bits,
// stores their bits and the marker, and then lets reads use the bits.
// Headers written meanwhile set their bits themselves.
func (e *Engine) findHeaders(ctx context.Context) error {
	found := map[uint16]bool{}
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsData}})
		defer it.Close()
		var keyBuf []byte
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			k := it.Item().Key()
			if len(k) <= tablePrefixLen || k[len(k)-1] != kindRowHeader {
				continue
			}
			rp := k[:len(k)-1]
			if key, rest, err := e.part.DecodeRowKey(keyBuf[:0], rp[tablePrefixLen:]); err == nil {
				keyBuf = key[:0]
				if len(rest) != 0 {
					continue // not a row header: a key that ends in 0x00
				}
			} else if len(rp) != maxRowPrefix {
				continue
			}
			found[headerBit(rp)] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("list the row headers: %w", err)
	}
	err = e.writeBatch(func(wb *badger.WriteBatch) error {
		for i := range found {
			if err := wb.Set(headerBitKey(i), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record the header filter: %w", err)
	}
	for i := range found {
		e.headers.set(i)
	}
	if err := e.update(func(txn *badger.Txn) error { return txn.Set(headerMarkerKey, nil) }); err != nil {
		return fmt.Errorf("record the header filter: %w", err)
	}
	e.headers.known.Store(true)
	e.log.Info("listed the store's row headers: reads of other rows skip looking for one", "rows", len(found))
	return nil
}
