package badgerstore

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store/partition"
)

// TestStatsAndCheck: the value log counts the disk space of its values,
// not the 2 GiB Badger reserves for a new file; the LSM tree reports its
// levels; a closed store tells nothing and fails its check.
func TestStatsAndCheck(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: t.TempDir(), Partitioner: partition.Murmur3Partitioner{},
		Logger: slog.New(slog.DiscardHandler), GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(ctx); err != nil {
		t.Fatalf("check of an open store: %v", err)
	}
	before, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Levels) == 0 || before.Levels[0].Level != 0 {
		t.Fatalf("levels of a new store: %+v", before.Levels)
	}
	// A value above Badger's value threshold goes to the value log.
	const valueBytes = 4 << 20
	big := []byte(strings.Repeat("v", valueBytes))
	if err := e.db.Update(func(txn *badger.Txn) error { return txn.Set([]byte{nsSchema, schemaMeta, 't', 'e', 's', 't'}, big) }); err != nil {
		t.Fatal(err)
	}
	after, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if grown := after.VlogBytes - before.VlogBytes; grown < valueBytes || after.VlogBytes >= 1<<30 {
		t.Errorf("value log %d bytes before, %d after a %d-byte value", before.VlogBytes, after.VlogBytes, valueBytes)
	}
	var sum int64
	for _, l := range after.Levels {
		sum += l.Bytes
	}
	if sum != after.LSMBytes {
		t.Errorf("LSM bytes %d, levels add up to %d", after.LSMBytes, sum)
	}

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Stats(); err == nil {
		t.Error("stats of a closed store")
	}
	if err := e.Check(ctx); err == nil {
		t.Error("check of a closed store passed")
	}
}
