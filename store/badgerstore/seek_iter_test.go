package badgerstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestSeekIterLandsWhereBadgerSeeks drives a seekIter and a plain Badger
// iterator through the same random seeks and steps, over keys that are
// prefixes of one another and differ by a trailing zero byte (the edge of
// the step rule), with some deleted, and checks that both stand on the same
// key after every move.
func TestSeekIterLandsWhereBadgerSeeks(t *testing.T) {
	db, err := badger.Open(badger.DefaultOptions("").WithInMemory(true).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	prefix := []byte{0x02}
	randomKey := func() []byte {
		k := append([]byte{}, prefix...)
		for range 1 + rng.IntN(4) {
			k = append(k, []byte{0, 1, 0xfe, 0xff}[rng.IntN(4)])
		}
		return k
	}
	var keys [][]byte
	err = db.Update(func(txn *badger.Txn) error {
		for range 300 {
			k := randomKey()
			keys = append(keys, k)
			if err := txn.Set(k, []byte("v")); err != nil {
				return err
			}
		}
		// Keys outside the prefix, on both sides.
		for _, k := range [][]byte{{0x01, 0xff}, {0x03}, {0x03, 0}} {
			if err := txn.Set(k, []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(txn *badger.Txn) error {
		for i := 0; i < len(keys); i += 7 {
			if err := txn.Delete(keys[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
	db, err := badger.Open(badger.DefaultOptions("").WithInMemory(true).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(txn *badger.Txn) error {
		for _, k := range []string{"a", "a\x00", "b", "c"} {
			if err := txn.Set([]byte(k), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
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
