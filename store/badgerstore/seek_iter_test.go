package badgerstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// memoryDB opens an in-memory Badger store and applies each of the
// writes, in order, in a transaction of its own.
func memoryDB(t *testing.T, writes ...func(txn *badger.Txn) error) *badger.DB {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions("").WithInMemory(true).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, w := range writes {
		if err := db.Update(w); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// setKeys writes each key with a value.
func setKeys(keys ...[]byte) func(txn *badger.Txn) error {
	return func(txn *badger.Txn) error {
		for _, k := range keys {
			if err := txn.Set(k, []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestSeekIterLandsWhereBadgerSeeks drives a seekIter and a plain Badger
// iterator through the same random seeks and steps, over keys that are
// prefixes of one another and differ by a trailing zero byte (the edge of
// the step rule), with some deleted, and checks that both stand on the same
// key after every move.
func TestSeekIterLandsWhereBadgerSeeks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefix := []byte{0x02}
	randomKey := func() []byte {
		k := append([]byte{}, prefix...)
		for range 1 + rng.IntN(4) {
			k = append(k, []byte{0, 1, 0xfe, 0xff}[rng.IntN(4)])
		}
		return k
	}
	var keys, deleted [][]byte
	for i := range 300 {
		keys = append(keys, randomKey())
		if i%7 == 0 {
			deleted = append(deleted, keys[i])
		}
	}
	// Keys outside the prefix, on both sides.
	keys = append(keys, []byte{0x01, 0xff}, []byte{0x03}, []byte{0x03, 0})
	db := memoryDB(t, setKeys(keys...), func(txn *badger.Txn) error {
		for _, k := range deleted {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	txn := db.NewTransaction(false)
	defer txn.Discard()
	opts := badger.IteratorOptions{Prefix: prefix}
	plain := txn.NewIterator(opts)
	defer plain.Close()
	tracked := newSeekIter(txn.NewIterator(opts), false)
	defer tracked.Close()

	at := func(it *badger.Iterator) string {
		if !it.Valid() {
			return "end"
		}
		return fmt.Sprintf("%x", it.Item().Key())
	}
	skipped := 0
	for step := range 20000 {
		var move string
		if rng.IntN(3) == 0 && plain.Valid() {
			move = "next"
			plain.Next()
			tracked.Next()
		} else {
			target := randomKey()
			if rng.IntN(10) == 0 && plain.Valid() {
				target = plain.Item().KeyCopy(nil) // where it stands
			}
			move = fmt.Sprintf("seek %x", target)
			before := at(tracked.Iterator)
			plain.Seek(target)
			tracked.Seek(target)
			if at(tracked.Iterator) == before {
				skipped++
			}
		}
		if want, got := at(plain), at(tracked.Iterator); want != got {
			t.Fatalf("move %d (%s): Badger stands on %s, seekIter on %s", step, move, want, got)
		}
	}
	if skipped == 0 {
		t.Fatal("no seek was answered without moving: the test does not reach the rule it checks")
	}
}

// TestSeekIterReverseSeeksAsBadger checks that a plain seekIter over a
// reverse iterator is Badger's reverse iterator.
func TestSeekIterReverseSeeksAsBadger(t *testing.T) {
	db := memoryDB(t, setKeys([]byte("a"), []byte("a\x00"), []byte("b"), []byte("c")))
	txn := db.NewTransaction(false)
	defer txn.Discard()
	it := newSeekIter(txn.NewIterator(badger.IteratorOptions{Reverse: true}), true)
	defer it.Close()
	for _, c := range []struct{ seek, want string }{{"bb", "b"}, {"a\x00", "a\x00"}, {"c", "c"}, {"a\x00\x00", "a\x00"}} {
		it.Seek([]byte(c.seek))
		if !it.Valid() || !bytes.Equal(it.Item().Key(), []byte(c.want)) {
			t.Fatalf("reverse seek %q: want %q", c.seek, c.want)
		}
	}
}
