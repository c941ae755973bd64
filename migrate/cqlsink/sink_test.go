package cqlsink

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

func TestParseURL(t *testing.T) {
	hosts, ks, err := ParseURL("cql://127.0.0.1:9042,10.0.0.2/blog")
	if err != nil || ks != "blog" || strings.Join(hosts, " ") != "127.0.0.1:9042 10.0.0.2:9042" {
		t.Errorf("ParseURL = %v, %q, %v", hosts, ks, err)
	}
	for _, bad := range []string{"cql://host:9042", "file:x.cql", "cql:///ks", "cql://h/a/b"} {
		if _, _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}

// sliceSource is a Source over rows in memory.
type sliceSource struct {
	ks   supercol.KeyspaceDef
	rows map[string][]migrate.RowChunk
}

func (s *sliceSource) Keyspace(context.Context) (supercol.KeyspaceDef, error) { return s.ks, nil }
func (s *sliceSource) Close() error                                           { return nil }
func (s *sliceSource) Scan(ctx context.Context, family string, from migrate.Position, visit func(migrate.RowChunk) error) error {
	skipping := from.Started
	for _, r := range s.rows[family] {
		if skipping {
			skipping = !bytes.Equal(r.Key, from.AfterKey)
			continue
		}
		if err := visit(r); err != nil {
			return err
		}
	}
	return nil
}

func testSource() *sliceSource {
	now := time.Now().Unix()
	return &sliceSource{
		ks: supercol.KeyspaceDef{Name: "Legacy", Families: []supercol.FamilyDef{
			{Name: "Comments", Super: true, KeyValidator: "UTF8Type", Comparator: "LongType", SubComparator: "UTF8Type", DefaultValidator: "UTF8Type"},
			{Name: "Hits", KeyValidator: "UTF8Type", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"},
		}},
		rows: map[string][]migrate.RowChunk{
			"Comments": {
				{Key: []byte("post-1"), Last: true, Cells: []migrate.Cell{
					{Super: []byte{0, 0, 0, 0, 0, 0, 0, 1}, Name: []byte("author"), Value: []byte("bob"), Timestamp: 1_600_000_000_000_001},
					{Super: []byte{0, 0, 0, 0, 0, 0, 0, 1}, Name: []byte("text"), Value: []byte("hi"), Timestamp: 1_600_000_000_000_002, TTL: 86400, ExpiresAt: now + 3600},
				}},
				{Key: []byte("post-2"), Last: true, Cells: []migrate.Cell{
					{Super: []byte{0, 0, 0, 0, 0, 0, 0, 2}, Name: []byte("author"), Value: []byte("carol"), Timestamp: 1_600_000_000_000_003},
				}},
			},
			"Hits": {
				{Key: []byte("page"), Last: true, Cells: []migrate.Cell{
					{Name: []byte("2024-01"), Counter: true, CounterValue: 41, Timestamp: 1},
					{Name: []byte("2024-02"), Counter: true, CounterValue: 1, Timestamp: 1},
				}},
			},
		},
	}
}

// TestSinkAgainstCluster converts into a fresh keyspace of each test
// server, verifies it cell by cell, resumes the counter family without
// counting twice, and refuses a table of another shape.
func TestSinkAgainstCluster(t *testing.T) {
	for _, c := range testcluster.Require(t, "the gocql sink test") {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // the servers are independent
			sinkAgainstCluster(t, c.Hosts)
		})
	}
}

func sinkAgainstCluster(t *testing.T, hosts []string) {
	ctx := context.Background()
	keyspace := testcluster.Keyspace("tb_sink")
	sink, err := Connect(ctx, Config{Hosts: hosts, Keyspace: keyspace, Consistency: gocql.One, Concurrency: 4})
	if err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	defer func() {
		if err := sink.exec(ctx, "DROP KEYSPACE IF EXISTS "+keyspace); err != nil {
			t.Errorf("drop keyspace %s: %v", keyspace, err)
		}
		sink.Close()
	}()
	src := testSource()
	opts := migrate.Options{TargetKeyspace: keyspace, NoMetadata: true}
	rep, err := migrate.Convert(ctx, src, sink, opts)
	if err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	if rep.Cells != 5 {
		t.Errorf("wrote %d cells, want 5", rep.Cells)
	}

	target, err := OpenTarget(ctx, hosts, gocql.One)
	if err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	defer target.Close()
	vrep, err := migrate.Verify(ctx, src, target, migrate.VerifyOptions{Options: opts})
	if err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	if !vrep.OK() || vrep.Matched != 5 {
		t.Errorf("verify: %+v", vrep)
		for _, f := range vrep.Families {
			t.Logf("%+v", f)
		}
	}

	// A resumed run probes every increment: the counters stay as they are.
	if err := sink.Resuming(ctx); err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	if _, err := migrate.Convert(ctx, src, sink, migrate.Options{TargetKeyspace: keyspace, Families: []string{"Hits"}, NoMetadata: true}); err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	vrep, err = migrate.Verify(ctx, src, target, migrate.VerifyOptions{Options: migrate.Options{TargetKeyspace: keyspace, Families: []string{"Hits"}, NoMetadata: true}})
	if err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	if !vrep.OK() {
		t.Errorf("counters after a resumed run: %+v", vrep.Families[0])
	}

	// A table of another shape is refused.
	if err := sink.exec(ctx, "DROP TABLE "+keyspace+".\"Hits\""); err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	if err := sink.exec(ctx, "CREATE TABLE "+keyspace+".\"Hits\" (key text PRIMARY KEY, other int)"); err != nil {
		t.Fatal(testcluster.Explain(err))
	}
	_, err = migrate.Convert(ctx, src, sink, migrate.Options{TargetKeyspace: keyspace, Families: []string{"Hits"}, NoMetadata: true})
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("converting into a table of another shape: %v", err)
	}
}
