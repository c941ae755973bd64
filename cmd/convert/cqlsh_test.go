package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// TestFixtureScriptsThroughCqlsh runs the expected script of every fixture
// model and shape through a real cqlsh (CQLSH, the executable:
// `test/cqlsh/install.sh` installs one and prints its path) into a fresh
// keyspace A of each test server, converts the same data through the gocql
// sink into a keyspace B, and compares the two: the same tables and
// columns, and in every table the same rows, values and writetimes, and
// the same TTLs within 2 s.
//
// The script is `convert data --to file: --keyspace A` as of the model's
// Now, checked to be the expected script (fixtures/<model>/expected/) but
// for the keyspace's name. cqlsh must take it as it is: an exit status
// other than 0, or any line of output but cqlsh's warning that it was
// built for another server version, fails the test.
//
// A cluster counts each TTL down from when it wrote the cell, and A and B
// are written a few seconds apart: a TTL read from either is compared as
// what it was when its load ended (the TTL read, plus the time from the
// end of the load to the read).
func TestFixtureScriptsThroughCqlsh(t *testing.T) {
	cqlsh := os.Getenv("CQLSH")
	if cqlsh == "" {
		t.Skip("!!! SKIPPED: running the fixture scripts through cqlsh needs CQLSH (the cqlsh executable; `test/cqlsh/install.sh` installs one and prints its path) and CASSANDRA_HOSTS and/or CASSANDRA_TARGET_HOSTS !!!")
	}
	for _, c := range testcluster.Require(t, "running the fixture scripts through cqlsh") {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // the servers are independent
			session := testcluster.Session(t, c)
			home := t.TempDir() // cqlsh's ~/.cassandra
			for _, name := range fixtures.Names() {
				m := loadModel(t, name)
				dir := t.TempDir()
				if err := exportFixture(m, dir, nil); err != nil {
					t.Fatal(err)
				}
				for _, shape := range m.ExpectedShapes() {
					t.Run(name+"/"+shape, func(t *testing.T) {
						ksA := testcluster.Keyspace("tb_cqlsh_" + name + "_" + shape)
						ksB := testcluster.Keyspace("tb_gocql_" + name + "_" + shape)
						testcluster.DropWhenDone(t, session, ksA, ksB)
						from := append(dumpSource(dir), shapeFlags(t, m, shape)...)
						from = append(from, "--now", strconv.FormatInt(m.Now.Unix(), 10))

						script := filepath.Join(t.TempDir(), name+"-"+shape+".cql")
						if _, err := convert(t, append([]string{"data", "--to", "file:" + script, "--keyspace", ksA, "--quiet", "--no-metadata"}, from...)...); err != nil {
							t.Fatal(err)
						}
						expectedButKeyspace(t, m, shape, script, ksA)
						runCqlsh(t, cqlsh, home, c.Hosts[0], script)
						loadedA := time.Now()

						if _, err := convert(t, append([]string{"data", "--to", c.URL(ksB), "--quiet", "--no-metadata"}, from...)...); err != nil {
							t.Fatal(testcluster.Explain(err))
						}
						loadedB := time.Now()

						a := readKeyspace(t, session, ksA, loadedA)
						b := readKeyspace(t, session, ksB, loadedB)
						compareKeyspaces(t, a, b)
					})
				}
			}
		})
	}
}

// expectedButKeyspace checks that the script at path, written with
// --no-metadata, is the expected script of shape but for its keyspace,
// keyspace instead of the model's, and without thriftd's catalog rows at
// the expected script's end.
func expectedButKeyspace(t *testing.T, m *fixtures.Model, shape, path, keyspace string) {
	t.Helper()
	want, got := expectedAndScript(t, m, shape, path)
	if i := bytes.Index(want, []byte("\n-- thriftd's catalog")); i >= 0 {
		want = want[:i+1]
	}
	// keyspace is a name no value of a fixture holds.
	got = bytes.ReplaceAll(got, []byte(keyspace), []byte(supercol.QuoteIdent(m.Keyspace.Name)))
	if d := golden.FirstDifference(want, got); d != "" {
		t.Fatalf("the script for keyspace %s is not fixtures/%s/expected/%s.cql but for the keyspace:\n%s", keyspace, m.Name, shape, d)
	}
}

// cqlshBanner is the one line cqlsh may print running a correct script:
// its warning that it was built for another server version.
var cqlshBanner = regexp.MustCompile(`^WARNING: cqlsh was built against \S+, but this server is \S+\.\s+All features may not work!$`)

// runCqlsh runs `cqlsh HOST PORT -f script` with home as its home
// directory.
func runCqlsh(t *testing.T, cqlsh, home, hostPort, script string) {
	t.Helper()
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cqlsh, host, port, "--request-timeout", "60", "-f", script)
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	var unexpected []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" && !cqlshBanner.MatchString(line) {
			unexpected = append(unexpected, line)
		}
	}
	if err != nil || len(unexpected) > 0 {
		t.Fatalf("%s %s %s -f %s: %v\n%s", cqlsh, host, port, script, err, strings.Join(unexpected, "\n"))
	}
}

// loadedKeyspace is what a keyspace holds.
type loadedKeyspace struct {
	name string
	// columns describes each table's columns, by table.
	columns map[string][]columnDef
	// rows holds each table's rows by their primary key.
	rows map[string]map[string]loadedRow
}

// columnDef is a row of system_schema.columns.
type columnDef struct {
	name, kind, typ, order string
	position               int
}

// loadedRow is one row read back: a value, writetime and TTL for each
// column outside the primary key (value only in a counter table).
type loadedRow []loadedCell

type loadedCell struct {
	value rawCell
	// writetime and ttl are unset (null) in a counter table, for a null
	// value and for a cell without TTL.
	writetime, ttl rawCell
	// ttlAtLoad is the TTL as it was when the keyspace's load ended.
	ttlAtLoad float64
}

// rawCell receives a column's bytes.
type rawCell struct {
	b    []byte
	null bool
}

func (r *rawCell) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	r.null = data == nil
	r.b = append([]byte(nil), data...)
	return nil
}

// readKeyspace reads every table of keyspace; loaded is when its load
// ended.
func readKeyspace(t *testing.T, session *gocql.Session, keyspace string, loaded time.Time) loadedKeyspace {
	t.Helper()
	k := loadedKeyspace{name: keyspace, columns: map[string][]columnDef{}, rows: map[string]map[string]loadedRow{}}
	iter := session.Query(`SELECT table_name, column_name, kind, type, clustering_order, position FROM system_schema.columns WHERE keyspace_name = ?`, keyspace).Iter()
	var table string
	var c columnDef
	for iter.Scan(&table, &c.name, &c.kind, &c.typ, &c.order, &c.position) {
		k.columns[table] = append(k.columns[table], c)
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("read the columns of %s: %s", keyspace, testcluster.Explain(err))
	}
	if len(k.columns) == 0 {
		t.Fatalf("keyspace %s has no table", keyspace)
	}
	for table, cols := range k.columns {
		// Primary key first, in order; then the other columns by name.
		rank := map[string]int{"partition_key": 0, "clustering": 1, "static": 2, "regular": 2}
		slices.SortFunc(cols, func(a, b columnDef) int {
			if d := rank[a.kind] - rank[b.kind]; d != 0 {
				return d
			}
			if a.kind == "partition_key" || a.kind == "clustering" {
				return a.position - b.position
			}
			return strings.Compare(a.name, b.name)
		})
		k.columns[table] = cols
		k.rows[table] = readTable(t, session, keyspace, table, cols, loaded)
	}
	return k
}

// readTable reads every row of a table with its cells' writetimes and
// TTLs.
func readTable(t *testing.T, session *gocql.Session, keyspace, table string, cols []columnDef, loaded time.Time) map[string]loadedRow {
	t.Helper()
	var sel []string
	nkey := 0
	counter := slices.ContainsFunc(cols, func(c columnDef) bool { return c.typ == "counter" })
	for _, c := range cols {
		q := supercol.QuoteIdent(c.name)
		sel = append(sel, q)
		switch {
		case c.kind == "partition_key" || c.kind == "clustering":
			nkey++
		case !counter:
			sel = append(sel, "WRITETIME("+q+")", "TTL("+q+")")
		}
	}
	cql := "SELECT " + strings.Join(sel, ", ") + " FROM " + supercol.QuoteIdent(keyspace) + "." + supercol.QuoteIdent(table)
	read := time.Now()
	iter := session.Query(cql).PageSize(1000).Iter()
	dest := make([]rawCell, len(sel))
	ptrs := make([]any, len(sel))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	rows := map[string]loadedRow{}
	for iter.Scan(ptrs...) {
		var key []string
		for _, v := range dest[:nkey] {
			key = append(key, hex.EncodeToString(v.b))
		}
		var row loadedRow
		for j := nkey; j < len(dest); {
			cell := loadedCell{value: dest[j]}
			j++
			if !counter {
				cell.writetime, cell.ttl = dest[j], dest[j+1]
				j += 2
				if len(cell.ttl.b) == 4 {
					cell.ttlAtLoad = float64(int32(binary.BigEndian.Uint32(cell.ttl.b))) + read.Sub(loaded).Seconds()
				}
			}
			row = append(row, cell)
		}
		rows[strings.Join(key, ":")] = row
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %s", cql, testcluster.Explain(err))
	}
	return rows
}

// compareKeyspaces reports every difference between a (loaded by cqlsh)
// and b (by the gocql sink).
func compareKeyspaces(t *testing.T, a, b loadedKeyspace) {
	t.Helper()
	tables := func(k loadedKeyspace) []string {
		var names []string
		for name := range k.columns {
			names = append(names, name)
		}
		slices.Sort(names)
		return names
	}
	if ta, tb := tables(a), tables(b); !slices.Equal(ta, tb) {
		t.Fatalf("cqlsh created the tables %v, the gocql sink %v", ta, tb)
	}
	var rows, cells, ttls int
	for _, table := range tables(a) {
		if ca, cb := a.columns[table], b.columns[table]; !slices.Equal(ca, cb) {
			t.Errorf("table %s: cqlsh created the columns %+v, the gocql sink %+v", table, ca, cb)
			continue
		}
		cols := a.columns[table]
		nkey := slices.IndexFunc(cols, func(c columnDef) bool { return c.kind != "partition_key" && c.kind != "clustering" })
		if nkey < 0 {
			nkey = len(cols)
		}
		ra, rb := a.rows[table], b.rows[table]
		for key, rowA := range ra {
			rowB, ok := rb[key]
			if !ok {
				t.Errorf("table %s: row [%s] is in the cqlsh keyspace only", table, key)
				continue
			}
			rows++
			for i := range rowA {
				col := cols[nkey+i].name
				where := fmt.Sprintf("table %s, row [%s], column %s", table, key, col)
				ca, cb := rowA[i], rowB[i]
				switch {
				case ca.value.null != cb.value.null || !bytes.Equal(ca.value.b, cb.value.b):
					t.Errorf("%s: value %s (cqlsh), %s (gocql)", where, cellString(ca.value), cellString(cb.value))
				case ca.writetime.null != cb.writetime.null || !bytes.Equal(ca.writetime.b, cb.writetime.b):
					t.Errorf("%s: writetime %s (cqlsh), %s (gocql)", where, cellString(ca.writetime), cellString(cb.writetime))
				case ca.ttl.null != cb.ttl.null:
					t.Errorf("%s: TTL %s (cqlsh), %s (gocql)", where, cellString(ca.ttl), cellString(cb.ttl))
				case !ca.ttl.null && math.Abs(ca.ttlAtLoad-cb.ttlAtLoad) > 2:
					t.Errorf("%s: TTL %.1f s when cqlsh's load ended, %.1f s when the gocql sink's did", where, ca.ttlAtLoad, cb.ttlAtLoad)
				}
				if !ca.value.null {
					cells++
					if !ca.ttl.null {
						ttls++
					}
				}
			}
		}
		for key := range rb {
			if _, ok := ra[key]; !ok {
				t.Errorf("table %s: row [%s] is in the gocql keyspace only", table, key)
			}
		}
	}
	if rows == 0 {
		t.Errorf("no rows in %s and %s", a.name, b.name)
	}
	t.Logf("%d tables, %d rows, %d cells (%d with a TTL) alike", len(a.columns), rows, cells, ttls)
}

func cellString(c rawCell) string {
	switch {
	case c.null:
		return "null"
	case len(c.b) == 8:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(c.b)), 10) + " (0x" + hex.EncodeToString(c.b) + ")"
	case len(c.b) == 4:
		return strconv.Itoa(int(int32(binary.BigEndian.Uint32(c.b)))) + " (0x" + hex.EncodeToString(c.b) + ")"
	}
	return "0x" + hex.EncodeToString(c.b)
}
