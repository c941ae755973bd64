package cqlstore

import (
	"context"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
)

// TestPassthroughKeyspace runs CQL with unqualified names in the client's
// keyspace on every cluster: on Cassandra 5.0 the request names it
// (protocol 5), on 3.11 (protocol 4) a session bound to it runs the
// statement; the statement's text is the client's either way.
func TestPassthroughKeyspace(t *testing.T) {
	for _, c := range testcluster.Require(t, "CQL passed through in a keyspace") {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prefix := testcluster.Keyspace("tb_ptks") + "_"
			e := openOwn(ctx, t, c.Hosts, prefix)
			want := 5
			if c.Env == "CASSANDRA_HOSTS" {
				want = 4
			}
			if e.protocol != want {
				t.Fatalf("protocol version %d, want %d", e.protocol, want)
			}
			if (e.bound != nil) != (want < 5) {
				t.Errorf("bound sessions %v on protocol %d", e.bound != nil, e.protocol)
			}
			run := func(keyspace, stmt string, values ...[]byte) [][][]byte {
				t.Helper()
				res, err := e.ExecuteCQL(ctx, keyspace, stmt, values)
				if err != nil {
					t.Fatalf("%s (in %q): %v", stmt, keyspace, err)
				}
				return res.Rows
			}
			for _, ks := range []string{"a", "b"} {
				run("", `CREATE KEYSPACE "`+prefix+ks+`" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
				run(ks, `CREATE TABLE t (k text PRIMARY KEY, v text)`)
				run(ks, `INSERT INTO t (k, v) VALUES ('k', ?)`, []byte(ks))
			}
			for _, ks := range []string{"a", "b", "a"} {
				rows := run(ks, `SELECT v FROM t WHERE k = ?`, []byte("k"))
				if len(rows) != 1 || string(rows[0][0]) != ks {
					t.Errorf("in %s: rows %q, want [[%s]]", ks, rows, ks)
				}
				vars, err := e.PrepareCQL(ctx, ks, `UPDATE t SET v = ? WHERE k = ?`)
				if err != nil || len(vars) != 2 || vars[0].Name != "v" {
					t.Errorf("prepare in %s: %v, %v", ks, vars, err)
				}
			}
			// Without a keyspace, and in one that does not exist, the
			// cluster refuses unqualified names as its own clients see.
			for _, ks := range []string{"", "missing"} {
				if _, err := e.ExecuteCQL(ctx, ks, `SELECT v FROM t`, nil); err == nil {
					t.Errorf("unqualified SELECT in %q: no error", ks)
				}
			}
			if e.bound != nil {
				e.bound.mu.Lock()
				n := len(e.bound.byName)
				e.bound.mu.Unlock()
				if n != 2 {
					t.Errorf("%d bound sessions, want 2 (a, b)", n)
				}
			}
		})
	}
}

// TestKeyspaceSessionsBounded opens more bound sessions than the bound:
// the least recently used is closed once no request holds it, and all
// are closed with the engine.
func TestKeyspaceSessionsBounded(t *testing.T) {
	var hosts []string
	for _, c := range testcluster.Require(t, "bound sessions") {
		hosts = c.Hosts
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k := newKeyspaceSessions(connConfig(Options{Hosts: hosts, Consistency: gocql.One, Timeout: 10 * time.Second}), 2)
	held, err := k.acquire(ctx, "system")
	if err != nil {
		t.Fatal(err)
	}
	for _, ks := range []string{"system_schema", "system_auth", "system"} {
		b, err := k.acquire(ctx, ks)
		if err != nil {
			t.Fatal(err)
		}
		k.release(b)
	}
	// "system" was evicted while held, and opened anew.
	if !held.evicted || held.session == nil || held.session.Closed() {
		t.Errorf("held session: evicted %v, open %v", held.evicted, held.session != nil && !held.session.Closed())
	}
	s := held.session
	k.release(held)
	if !s.Closed() {
		t.Error("an evicted session is open once released")
	}
	k.mu.Lock()
	open := make([]*boundSession, 0, len(k.byName))
	for _, b := range k.byName {
		open = append(open, b)
	}
	k.mu.Unlock()
	if len(open) != 2 {
		t.Fatalf("%d sessions kept, want 2", len(open))
	}
	k.close()
	for _, b := range open {
		if b.session != nil {
			t.Errorf("session in %s open after close", b.keyspace)
		}
	}
	if _, err := k.acquire(ctx, "system"); err == nil {
		t.Error("acquire after close: no error")
	}
}
