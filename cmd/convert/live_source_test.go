package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// This file runs convert against real Cassandra nodes: a 3.11 as the
// source over Thrift (CASSANDRA_THRIFT) and a 5.0 as the target
// (CASSANDRA_TARGET_HOSTS); test/cassandra/cassandra.sh starts both.

// TestLiveCassandraSource loads every fixture model into a real
// Cassandra 3.11 over Thrift (each under a keyspace of its own), converts
// it from there with every shape that has an expected script and
// compares the script with the one thriftd's conversion gives, then
// migrates it into a Cassandra 5.0 and verifies every cell.
func TestLiveCassandraSource(t *testing.T) {
	thriftAddr := requireEnv(t, "CASSANDRA_THRIFT", "converting from a live Cassandra over Thrift", "host:port of a Cassandra 3.11 Thrift port")
	targetHosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	id := runID(t)
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			m, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			keyspace := "tb_live_" + name + "_" + id
			start := time.Now()
			if err := loadFixture(ctx, thriftAddr, m, keyspace, thriftsource.ConnOptions{}); err != nil {
				t.Fatal(err)
			}
			dropThriftKeyspaceLater(t, thriftAddr, keyspace, thriftsource.ConnOptions{})
			t.Logf("loaded %s into %s as %s in %v", name, thriftAddr, keyspace, time.Since(start).Round(time.Millisecond))
			from := "thrift://" + thriftAddr + "/" + keyspace
			now := strconv.FormatInt(m.Now.Unix(), 10)

			for _, shape := range m.ExpectedShapes() {
				forced, err := m.ForcedShapes(ctx, shape)
				if err != nil {
					t.Fatal(err)
				}
				script := filepath.Join(t.TempDir(), shape+".cql")
				args := []string{"data", "--from", from, "--to", "file:" + script, "--keyspace", m.Keyspace.Name, "--now", now, "--quiet"}
				for family, s := range forced {
					args = append(args, "--shape", family+"="+string(s))
				}
				if _, stderr, err := liveConvert(ctx, args...); err != nil {
					t.Fatalf("shape %s: convert %s: %v\n%s", shape, strings.Join(args, " "), err, stderr)
				}
				sameAsGoldenButColumnOrder(t, m, shape, script, keyspace)
			}

			t.Run("into-target", func(t *testing.T) {
				if targetHosts == "" {
					t.Skip("!!! SKIPPED: migrating into a Cassandra 5.0 needs CASSANDRA_TARGET_HOSTS (host:port of its CQL port) !!!")
				}
				to := "cql://" + targetHosts + "/" + keyspace
				dropCQLKeyspaceLater(t, targetHosts, "", "", keyspace)
				start := time.Now()
				if _, stderr, err := liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet"); err != nil {
					t.Fatalf("convert into %s: %v\n%s", to, err, stderr)
				}
				out, stderr, err := liveConvert(ctx, "verify", "--from", from, "--to", to, "--now", now, "--tolerance", "30s")
				if err != nil || !strings.Contains(out, "OK:") {
					t.Fatalf("verify %s against %s: %v\n%s%s", from, to, err, out, stderr)
				}
				t.Logf("%s: migrated and verified in %v: %s", name, time.Since(start).Round(time.Millisecond), strings.TrimSpace(out[strings.LastIndex(out, "OK:"):]))
			})
		})
	}
}

// thriftClient connects to a Thrift node for the test's own calls.
func thriftClient(t *testing.T, addr string) *cassandra.CassandraClient {
	t.Helper()
	cfg := &thrift.TConfiguration{ConnectTimeout: 30 * time.Second, SocketTimeout: 60 * time.Second}
	transport := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(addr, cfg), cfg)
	if err := transport.Open(); err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { transport.Close() })
	return cassandra.NewCassandraClientFactory(transport, thrift.NewTBinaryProtocolFactoryConf(cfg))
}

// thriftError shows the reason of Cassandra's exceptions.
func thriftError(err error) string {
	switch e := err.(type) {
	case *cassandra.InvalidRequestException:
		return "invalid request: " + e.Why
	}
	return err.Error()
}

// TestLiveCassandraTableKinds converts the kinds of tables a Cassandra
// 3.11 describes over Thrift besides those of the fixtures: tables
// created through CQL WITH COMPACT STORAGE (names of their own for every
// column, composite partition keys, DESC clustering, counters, sparse
// tables), a Super family with declared subcolumns, and a family with
// Cassandra 1.2 aliases. The scripts must name the columns as the CQL
// schema does; a CQL table without COMPACT STORAGE, which Thrift does not
// list, must be named in a warning. With CASSANDRA_TARGET_HOSTS, the
// keyspace is migrated into a Cassandra 5.0 and verified.
func TestLiveCassandraTableKinds(t *testing.T) {
	thriftAddr := requireEnv(t, "CASSANDRA_THRIFT", "converting from a live Cassandra over Thrift", "host:port of a Cassandra 3.11 Thrift port")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	keyspace := "tb_kinds_" + runID(t)
	client := thriftClient(t, thriftAddr)

	str := func(s string) *string { return &s }
	super := cassandra.NewCfDef()
	super.Keyspace, super.Name, super.ColumnType, super.ComparatorType = keyspace, "Contacts", "Super", "UTF8Type"
	super.SubcomparatorType, super.DefaultValidationClass, super.KeyValidationClass = str("UTF8Type"), str("UTF8Type"), str("UTF8Type")
	super.ColumnMetadata = []*cassandra.ColumnDef{{Name: []byte("email"), ValidationClass: "UTF8Type"}, {Name: []byte("age"), ValidationClass: "LongType"}}
	aliased := cassandra.NewCfDef()
	aliased.Keyspace, aliased.Name, aliased.ComparatorType = keyspace, "Aliased", "CompositeType(UTF8Type,LongType)"
	aliased.DefaultValidationClass, aliased.KeyValidationClass = str("UTF8Type"), str("UTF8Type")
	aliased.KeyAlias, aliased.ColumnAliases, aliased.ValueAlias = []byte("user"), [][]byte{[]byte("kind"), []byte("seq")}, []byte("body")
	ks := &cassandra.KsDef{Name: keyspace, StrategyClass: "SimpleStrategy", StrategyOptions: map[string]string{"replication_factor": "1"},
		CfDefs: []*cassandra.CfDef{super, aliased}}
	if _, err := client.SystemAddKeyspace(ctx, ks); err != nil {
		t.Fatal(thriftError(err))
	}
	dropThriftKeyspaceLater(t, thriftAddr, keyspace, thriftsource.ConnOptions{})
	ts := int64(1699990000000000)
	cql := []string{
		`CREATE TABLE %s.events (k text, c1 int, c2 text, v blob, PRIMARY KEY (k, c1, c2)) WITH COMPACT STORAGE`,
		`CREATE TABLE %s.by_pair (a text, b int, c int, v text, PRIMARY KEY ((a, b), c)) WITH COMPACT STORAGE`,
		`CREATE TABLE %s.latest (k text, at timeuuid, v text, PRIMARY KEY (k, at)) WITH COMPACT STORAGE AND CLUSTERING ORDER BY (at DESC)`,
		`CREATE TABLE %s.hits (page text, day text, n counter, PRIMARY KEY (page, day)) WITH COMPACT STORAGE`,
		`CREATE TABLE %s.users (id text PRIMARY KEY, name text, born int) WITH COMPACT STORAGE`,
		`CREATE TABLE %s.modern (k text, c int, v text, PRIMARY KEY (k, c))`,
		`INSERT INTO %s.events (k, c1, c2, v) VALUES ('a', 1, 'x', 0x01) USING TIMESTAMP ` + fmt.Sprint(ts),
		`INSERT INTO %s.events (k, c1, c2, v) VALUES ('a', 2, 'y', 0x02) USING TTL 86400 AND TIMESTAMP ` + fmt.Sprint(ts+1),
		`INSERT INTO %s.by_pair (a, b, c, v) VALUES ('p', 1, 2, 'pv') USING TIMESTAMP ` + fmt.Sprint(ts),
		`INSERT INTO %s.latest (k, at, v) VALUES ('d', 48033200-832d-11ee-9122-0242ac110002, 'older') USING TIMESTAMP ` + fmt.Sprint(ts),
		`INSERT INTO %s.latest (k, at, v) VALUES ('d', 366e5a00-832e-11ee-9122-0242ac110002, 'newer') USING TIMESTAMP ` + fmt.Sprint(ts),
		`UPDATE %s.hits SET n = n + 5 WHERE page = 'home' AND day = '2023-11-14'`,
		`INSERT INTO %s.users (id, name, born) VALUES ('u1', 'Ada', 1815) USING TIMESTAMP ` + fmt.Sprint(ts),
		`INSERT INTO %s."Aliased" (user, column1, column2, value) VALUES ('u', 'kind', 5, 'body') USING TIMESTAMP ` + fmt.Sprint(ts),
		`INSERT INTO %s.modern (k, c, v) VALUES ('m', 1, 'not visible over Thrift')`,
	}
	for _, q := range cql {
		q = fmt.Sprintf(q, keyspace)
		if _, err := client.ExecuteCql3Query(ctx, []byte(q), cassandra.Compression_NONE, cassandra.ConsistencyLevel_ONE); err != nil {
			t.Fatalf("%s: %s", q, thriftError(err))
		}
	}
	if err := client.SetKeyspace(ctx, keyspace); err != nil {
		t.Fatal(thriftError(err))
	}
	col := func(name, value string) *cassandra.Column {
		return &cassandra.Column{Name: []byte(name), Value: []byte(value), Timestamp: &ts}
	}
	contact := &cassandra.SuperColumn{Name: []byte("home"), Columns: []*cassandra.Column{col("age", "\x00\x00\x00\x00\x00\x00\x00\x2a"), col("email", "ann@example.org")}}
	muts := map[string]map[string][]*cassandra.Mutation{"ann": {"Contacts": {{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: contact}}}}}
	if err := client.BatchMutate(ctx, muts, cassandra.ConsistencyLevel_ONE); err != nil {
		t.Fatal(thriftError(err))
	}

	from := "thrift://" + thriftAddr + "/" + keyspace
	now := "1700000000"
	script := filepath.Join(t.TempDir(), "kinds.cql")
	_, stderr, err := liveConvert(ctx, "data", "--from", from, "--to", "file:"+script, "--now", now, "--quiet")
	if err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "not visible over Thrift") || !strings.Contains(stderr, "modern") {
		t.Errorf("no warning about the CQL table Thrift does not list:\n%s", stderr)
	}
	got, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		// The names of the CQL schema, not key/column1/value.
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `.events (k text, c1 int, c2 text, v blob, PRIMARY KEY (k, c1, c2));`,
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `.by_pair (a text, b int, c int, v text, PRIMARY KEY ((a, b), c));`,
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `.latest (k text, at timeuuid, v text, PRIMARY KEY (k, at)) WITH CLUSTERING ORDER BY (at DESC);`,
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `.hits (page text, day text, n counter, PRIMARY KEY (page, day));`,
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `.users (id text, born int, name text, PRIMARY KEY (id));`,
		// The declared subcolumns, without 3.x's internal "" and value.
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `."Contacts" (key text, column1 text, age bigint, email text, PRIMARY KEY (key, column1));`,
		// 3.x keeps key_alias, not column_aliases and value_alias.
		`CREATE TABLE IF NOT EXISTS ` + keyspace + `."Aliased" (user text, column1 text, column2 bigint, value text, PRIMARY KEY (user, column1, column2));`,
		`INSERT INTO ` + keyspace + `.events (k, c1, c2, v) VALUES ('a', 2, 'y', 0x02) USING TTL `,
		`UPDATE ` + keyspace + `.hits SET n = n + 5 WHERE page = 'home' AND day = '2023-11-14';`,
		`INSERT INTO ` + keyspace + `."Contacts" (key, column1, age) VALUES ('ann', 'home', 42) USING TIMESTAMP 1699990000000000;`,
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the script lacks %s", want)
		}
	}
	if bytes.Contains(got, []byte("modern")) {
		t.Errorf("the script converts the table Thrift does not list")
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("script:\n%s", got)
	}

	targetHosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if targetHosts == "" {
		t.Skip("!!! SKIPPED: migrating into a Cassandra 5.0 needs CASSANDRA_TARGET_HOSTS (host:port of its CQL port) !!!")
	}
	to := "cql://" + targetHosts + "/" + keyspace
	dropCQLKeyspaceLater(t, targetHosts, "", "", keyspace)
	if _, stderr, err := liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet"); err != nil {
		t.Fatalf("convert into %s: %v\n%s", to, err, stderr)
	}
	out, stderr, err := liveConvert(ctx, "verify", "--from", from, "--to", to, "--now", now, "--tolerance", "30s")
	if err != nil || !strings.Contains(out, "OK:") {
		t.Fatalf("verify: %v\n%s%s", err, out, stderr)
	}
}

// TestLocalDataCenter routes a migration into the Cassandra 5.0 through
// its data center (--local-dc), and refuses a data center the cluster
// does not have.
func TestLocalDataCenter(t *testing.T) {
	thriftAddr := requireEnv(t, "CASSANDRA_THRIFT", "converting from a live Cassandra over Thrift", "host:port of a Cassandra 3.11 Thrift port")
	targetHosts := requireEnv(t, "CASSANDRA_TARGET_HOSTS", "migrating into a Cassandra 5.0", "host:port of its CQL port")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := fixtures.Load("eventlog")
	if err != nil {
		t.Fatal(err)
	}
	keyspace := "tb_dc_" + runID(t)
	if err := loadFixture(ctx, thriftAddr, m, keyspace, thriftsource.ConnOptions{}); err != nil {
		t.Fatal(err)
	}
	dropThriftKeyspaceLater(t, thriftAddr, keyspace, thriftsource.ConnOptions{})
	from, to := "thrift://"+thriftAddr+"/"+keyspace, "cql://"+targetHosts+"/"+keyspace
	now := strconv.FormatInt(m.Now.Unix(), 10)
	_, _, err = liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet", "--local-dc", "no_such_dc")
	if err == nil || !strings.Contains(err.Error(), `local data center "no_such_dc" has no node (the cluster's: `) {
		t.Fatalf("--local-dc no_such_dc: %v", err)
	}
	dc := localDataCenter(t, targetHosts)
	dropCQLKeyspaceLater(t, targetHosts, "", "", keyspace)
	if _, stderr, err := liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet", "--local-dc", dc); err != nil {
		t.Fatalf("--local-dc %s: %v\n%s", dc, err, stderr)
	}
	if out, stderr, err := liveConvert(ctx, "verify", "--from", from, "--to", to, "--now", now, "--tolerance", "30s", "--local-dc", dc); err != nil || !strings.Contains(out, "OK:") {
		t.Fatalf("verify: %v\n%s%s", err, out, stderr)
	}
}

// localDataCenter is the data center of the node at hosts.
func localDataCenter(t *testing.T, hosts string) string {
	t.Helper()
	var dc string
	if err := cqlSession(t, hosts, "", "").Query(`SELECT data_center FROM system.local`).Scan(&dc); err != nil {
		t.Fatal(err)
	}
	return dc
}
