package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Helpers of the tests that run convert against real Cassandra nodes
// (test/cassandra/cassandra.sh starts them): the nodes are shared, so
// every keyspace has a name of its own and is dropped when the test ends.

// requireEnv returns the environment variable name, skipping the test
// loudly when it is not set.
func requireEnv(t *testing.T, name, what, form string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("!!! SKIPPED: %s needs %s (%s; test/cassandra/cassandra.sh start ref auth target prints them) !!!", what, name, form)
	}
	return v
}

// runID makes the keyspace names of one test run unique: the nodes are
// shared with other tests and other people.
func runID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// liveConvert runs a convert command line, returning its stdout and
// stderr.
func liveConvert(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// cqlSession connects to a CQL node for the test's own statements (no
// prepared statements: DDL only).
func cqlSession(t *testing.T, hosts, user, password string) *gocql.Session {
	t.Helper()
	cluster := gocql.NewCluster(strings.Split(hosts, ",")...)
	cluster.Timeout, cluster.ConnectTimeout = 30*time.Second, 30*time.Second
	if user != "" {
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: user, Password: password}
	}
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connect to %s: %v", hosts, err)
	}
	t.Cleanup(s.Close)
	return s
}

// dropCQLKeyspaceLater drops a keyspace of a CQL node when the test ends.
func dropCQLKeyspaceLater(t *testing.T, hosts, user, password, keyspace string) {
	t.Helper()
	s := cqlSession(t, hosts, user, password)
	t.Cleanup(func() {
		if err := s.Query(`DROP KEYSPACE IF EXISTS "` + keyspace + `"`).Exec(); err != nil {
			t.Errorf("drop keyspace %s on %s: %v", keyspace, hosts, err)
		}
	})
}

// dropThriftKeyspaceLater drops a keyspace of a Thrift node when the test
// ends.
func dropThriftKeyspaceLater(t *testing.T, addr, keyspace string, o thriftsource.ConnOptions) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := thriftsource.Call(ctx, addr, o, func(ctx context.Context, c *cassandra.CassandraClient) error {
			_, err := c.SystemDropKeyspace(ctx, keyspace)
			return err
		})
		switch {
		case err != nil && strings.Contains(err.Error(), "non existing keyspace"):
			// The node is shared: a test that drops every keyspace it
			// did not see before it ran (legacy/conformance) got there
			// first.
			t.Logf("keyspace %s was already dropped", keyspace)
		case err != nil:
			t.Errorf("drop keyspace %s: %v", keyspace, err)
		}
	})
}

// sortedCreateTable puts the columns of a CREATE TABLE statement in name
// order (PRIMARY KEY last), leaving every other line alone.
func sortedCreateTable(script []byte) []byte {
	lines := strings.Split(string(script), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "CREATE TABLE ") {
			continue
		}
		open := strings.Index(l, " (")
		if open < 0 {
			continue
		}
		depth, end := 0, -1
		for j := open + 1; j < len(l) && end < 0; j++ {
			switch l[j] {
			case '(', '<':
				depth++
			case ')', '>':
				depth--
				if depth == 0 {
					end = j
				}
			}
		}
		if end < 0 {
			continue
		}
		var items []string
		depth, start := 0, open+2
		for j := open + 2; j < end; j++ {
			switch l[j] {
			case '(', '<':
				depth++
			case ')', '>':
				depth--
			case ',':
				if depth == 0 {
					items = append(items, strings.TrimSpace(l[start:j]))
					start = j + 1
				}
			}
		}
		items = append(items, strings.TrimSpace(l[start:end]))
		var cols, rest []string
		for _, it := range items {
			if strings.HasPrefix(it, "PRIMARY KEY") {
				rest = append(rest, it)
			} else {
				cols = append(cols, it)
			}
		}
		slices.Sort(cols)
		lines[i] = l[:open+2] + strings.Join(append(cols, rest...), ", ") + l[end:]
	}
	return []byte(strings.Join(lines, "\n"))
}

// sortedCatalog prepares the catalog INSERTs at a script's end for
// comparison: the legacy keyspace recorded is the source's, renamed from
// sourceKeyspace to keyspace (the fixture's own name, which the test's
// source keyspace stands for), and the column lists of the definition and
// of the shape are put in name order, as sortedCreateTable does for the
// CREATE TABLE it records.
func sortedCatalog(script []byte, sourceKeyspace, keyspace string) []byte {
	lines := strings.Split(string(script), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "INSERT INTO ") || !strings.Contains(l, "_meta.") {
			continue
		}
		for _, field := range []string{`"keyspace":"`, `"name":"`} {
			l = strings.ReplaceAll(l, field+sourceKeyspace+`"`, field+keyspace+`"`)
		}
		var out strings.Builder
		for {
			at := strings.Index(l, `"columns":[{`)
			if at < 0 {
				break
			}
			open := at + len(`"columns":[`)
			end := strings.Index(l[open:], "}]")
			if end < 0 {
				break
			}
			items := strings.Split(l[open+1:open+end], "},{")
			slices.Sort(items)
			out.WriteString(l[:open+1] + strings.Join(items, "},{"))
			l = l[open+end:]
		}
		out.WriteString(l)
		lines[i] = out.String()
	}
	return []byte(strings.Join(lines, "\n"))
}

// sameAsGoldenButColumnOrder compares a script converted from Cassandra,
// out of its keyspace sourceKeyspace, with the one converted from thriftd:
// they must be byte for byte the same but for the order of the columns in
// CREATE TABLE and in the catalog, which Cassandra does not keep (it
// describes declared columns in an order of its own, which the Thrift
// source sorts), and for the source keyspace's name in the catalog.
func sameAsGoldenButColumnOrder(t *testing.T, m *fixtures.Model, shape, path, sourceKeyspace string) {
	t.Helper()
	want, got := expectedAndScript(t, m, shape, path)
	if bytes.Equal(want, got) {
		return
	}
	normal := func(script []byte) []byte {
		return sortedCatalog(sortedCreateTable(script), sourceKeyspace, m.Keyspace.Name)
	}
	if d := firstDifference(normal(want), normal(got)); d != "" {
		t.Errorf("%s: the script converted from Cassandra differs from expected/%s.cql (beyond the order of columns):\n%s", m.Name, shape, d)
		return
	}
	t.Logf("%s %s: same as expected/%s.cql but for the order of columns and the source keyspace's name", m.Name, shape, shape)
}
