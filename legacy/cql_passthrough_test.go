package legacy_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// cqlSide is one server the CQL calls run on: thriftd over Cassandra 5.0,
// or Cassandra 3.11 itself.
type cqlSide struct {
	name string
	c    *conformance.Client
}

func (s cqlSide) exec(t *testing.T, cql string, cl cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	t.Helper()
	return s.c.ExecuteCql3Query(callCtx(t), []byte(cql), cassandra.Compression_NONE, cl)
}

func (s cqlSide) mustExec(t *testing.T, cql string) *cassandra.CqlResult_ {
	t.Helper()
	res, err := s.exec(t, cql, cassandra.ConsistencyLevel_ONE)
	if err != nil {
		t.Fatalf("%s: %s: %v", s.name, cql, testcluster.Explain(err))
	}
	return res
}

// cqlTable is the table the CQL tests read: every type the comparison
// covers, a null, an empty blob.
const cqlTable = `CREATE TABLE t (k text PRIMARY KEY, i int, b bigint, bl blob, e blob, tu timeuuid, m map<text, int>, l list<text>, fl frozen<list<int>>, n text)`

var cqlRows = []string{
	`INSERT INTO t (k, i, b, bl, e, tu, m, l, fl) VALUES ('a', 1, 9000000000, 0x0102ff, 0x, 50554d6e-29bb-11e5-b345-feff819cdc9f, {'x': 1, 'y': -2}, ['p', 'q'], [3, 4])`,
	`INSERT INTO t (k, i) VALUES ('b', -7)`,
}

// setUpCQL creates keyspace ks and the table through execute_cql3_query
// and drops the keyspace when t ends.
func setUpCQL(t *testing.T, s cqlSide, ks string) {
	t.Helper()
	for i, want := range []struct {
		cql  string
		kind cassandra.CqlResultType
	}{
		{`CREATE KEYSPACE ` + ks + ` WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`, cassandra.CqlResultType_VOID},
		{`USE ` + ks, cassandra.CqlResultType_VOID},
		{cqlTable, cassandra.CqlResultType_VOID},
		{cqlRows[0], cassandra.CqlResultType_VOID},
		{cqlRows[1], cassandra.CqlResultType_VOID},
	} {
		if res := s.mustExec(t, want.cql); res.Type != want.kind {
			t.Fatalf("%s: %s: %v, want %v", s.name, want.cql, res.Type, want.kind)
		}
		if i == 0 {
			t.Cleanup(func() {
				c := conformance.Dial(t, s.c.Addr)
				if _, err := c.ExecuteCql3Query(callCtx(t), []byte("DROP KEYSPACE IF EXISTS "+ks), cassandra.Compression_NONE, cassandra.ConsistencyLevel_ONE); err != nil {
					t.Errorf("%s: drop %s: %v", s.name, ks, err)
				}
			})
		}
	}
}

// TestCQLOverThriftOnCluster runs CQL 3 through thriftd's Thrift port on a
// cluster backend (Cassandra 5.0) and, when CASSANDRA_THRIFT is set, the
// same calls on Cassandra 3.11's own Thrift port, and compares the
// results field by field: result types, schemas (names and marshal
// classes), rows, prepared ids and variables, errors.
func TestCQLOverThriftOnCluster(t *testing.T) {
	td := startClusterThriftd(t, legacy.HandlerConfig{})
	ks := testcluster.Keyspace("tb_cqlpass")
	sides := []cqlSide{{name: "thriftd on Cassandra 5.0", c: dial(t, td.addr)}}
	if ref := referenceThrift(t); ref != "" {
		sides = append(sides, cqlSide{name: "Cassandra 3.11", c: dial(t, ref)})
	}
	type observed struct {
		selectAll, count, prepared, preparedRows any
		errs                                     []string
	}
	var seen []observed
	for _, s := range sides {
		if err := s.c.SetCqlVersion(callCtx(t), "3.4.4"); err != nil {
			t.Fatalf("%s: set_cql_version: %v", s.name, err)
		}
		setUpCQL(t, s, ks)
		var o observed
		res := s.mustExec(t, `SELECT k, i, b, bl, e, tu, m, l, fl, n FROM t WHERE k = 'a'`)
		o.selectAll = res
		if res.Type != cassandra.CqlResultType_ROWS || len(res.Rows) != 1 || len(res.Rows[0].Columns) != 10 {
			t.Fatalf("%s: select: %+v", s.name, res)
		}
		if v := res.Rows[0].Columns[9].Value; v != nil {
			t.Errorf("%s: null column has value %x", s.name, v)
		}
		if v := res.Rows[0].Columns[4].Value; v == nil || len(v) != 0 {
			t.Errorf("%s: empty blob is %#v, want empty and set", s.name, v)
		}
		o.count = s.mustExec(t, `SELECT count(*) FROM t`)

		prep, err := s.c.PrepareCql3Query(callCtx(t), []byte(`SELECT k, i, m FROM t WHERE k = ?`), cassandra.Compression_NONE)
		if err != nil {
			t.Fatalf("%s: prepare: %v", s.name, testcluster.Explain(err))
		}
		o.prepared = prep
		rows, err := s.c.ExecutePreparedCql3Query(callCtx(t), prep.ItemId, [][]byte{[]byte("b")}, cassandra.ConsistencyLevel_ONE)
		if err != nil {
			t.Fatalf("%s: execute prepared: %v", s.name, err)
		}
		o.preparedRows = rows
		// The id is known to another connection of the server.
		if _, err := dial(t, s.c.Addr).ExecutePreparedCql3Query(callCtx(t), prep.ItemId, [][]byte{[]byte("a")}, cassandra.ConsistencyLevel_ONE); err != nil {
			t.Errorf("%s: the prepared id on another connection: %v", s.name, err)
		}

		// Errors: each call answers its exception and the connection goes
		// on. thriftd words its own refusals as Cassandra 3.11; the
		// cluster's (an unknown table) are the cluster's own words, which
		// differ between versions: only the exceptions are compared.
		for _, call := range []struct {
			call         func() error
			clusterWords bool
		}{
			{call: func() error {
				_, err := s.c.ExecutePreparedCql3Query(callCtx(t), prep.ItemId, nil, cassandra.ConsistencyLevel_ONE)
				return err
			}},
			{call: func() error {
				_, err := s.exec(t, `SELECT * FROM t WHERE k = ?`, cassandra.ConsistencyLevel_ONE)
				return err
			}},
			{call: func() error {
				_, err := s.c.ExecutePreparedCql3Query(callCtx(t), prep.ItemId+1, nil, cassandra.ConsistencyLevel_ONE)
				return err
			}},
			{call: func() error {
				_, err := s.exec(t, `SELECT * FROM no_such_table`, cassandra.ConsistencyLevel_ONE)
				return err
			}, clusterWords: true},
			{call: func() error {
				_, err := s.exec(t, `USE no_such_keyspace_anywhere`, cassandra.ConsistencyLevel_ONE)
				return err
			}},
			// One node cannot meet THREE, nor TWO.
			{call: func() error { _, err := s.exec(t, `SELECT * FROM t`, cassandra.ConsistencyLevel_THREE); return err }},
			{call: func() error {
				_, err := s.exec(t, `INSERT INTO t (k, i) VALUES ('c', 3)`, cassandra.ConsistencyLevel_TWO)
				return err
			}},
		} {
			e := exceptionOf(call.call())
			if call.clusterWords {
				e, _, _ = strings.Cut(e, ":")
			}
			o.errs = append(o.errs, e)
		}
		var syntax *cassandra.InvalidRequestException
		if _, err := s.exec(t, `SELEC * FROM t`, cassandra.ConsistencyLevel_ONE); !errors.As(err, &syntax) {
			t.Errorf("%s: a syntax error: %v, want InvalidRequestException", s.name, err)
		}

		if s.name == sides[0].name {
			// Cassandra 3.11 cannot read an unknown level and answers a
			// protocol error; thriftd refuses it cleanly.
			_, err := s.exec(t, `SELECT * FROM t`, cassandra.ConsistencyLevel(42))
			if got := exceptionOf(err); got != "InvalidRequestException: unknown consistency level 42" {
				t.Errorf("%s: an unknown level: %s", s.name, got)
			}
		}

		// Compressed statements are zlib streams.
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write([]byte(`SELECT i FROM t WHERE k = 'b'`))
		_ = w.Close()
		if res, err := s.c.ExecuteCql3Query(callCtx(t), z.Bytes(), cassandra.Compression_GZIP, cassandra.ConsistencyLevel_ONE); err != nil || len(res.Rows) != 1 {
			t.Errorf("%s: compressed statement: %+v, %v", s.name, res, err)
		}
		seen = append(seen, o)
	}
	if len(seen) < 2 {
		t.Logf("%s: %+v", sides[0].name, seen[0])
		return
	}
	got, want := seen[0], seen[1]
	compare := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs:\n thriftd:        %+v\n Cassandra 3.11: %+v", what, dump(got), dump(want))
		}
	}
	compare("SELECT of every type", got.selectAll, want.selectAll)
	compare("SELECT count(*)", got.count, want.count)
	compare("prepare_cql3_query", got.prepared, want.prepared)
	compare("execute_prepared_cql3_query", got.preparedRows, want.preparedRows)
	for i := range got.errs {
		compare(fmt.Sprintf("error %d", i), got.errs[i], want.errs[i])
	}
}

// exceptionOf names the exception err is, with the reason of an
// InvalidRequestException.
func exceptionOf(err error) string {
	var ire *cassandra.InvalidRequestException
	var un *cassandra.UnavailableException
	var to *cassandra.TimedOutException
	switch {
	case err == nil:
		return "no error"
	case errors.As(err, &ire):
		return "InvalidRequestException: " + ire.Why
	case errors.As(err, &un):
		return "UnavailableException"
	case errors.As(err, &to):
		return "TimedOutException"
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// dump renders a Thrift result with its nested values.
func dump(v any) string {
	switch r := v.(type) {
	case *cassandra.CqlResult_:
		var b bytes.Buffer
		fmt.Fprintf(&b, "%v num=%v", r.Type, r.Num)
		if r.Schema != nil {
			fmt.Fprintf(&b, " schema{names=%v values=%v default=%s/%s}", r.Schema.NameTypes, r.Schema.ValueTypes, r.Schema.DefaultNameType, r.Schema.DefaultValueType)
		}
		for _, row := range r.Rows {
			fmt.Fprintf(&b, " row{key=%x", row.Key)
			for _, c := range row.Columns {
				fmt.Fprintf(&b, " %s=%x(set=%v ts=%v ttl=%v)", c.Name, c.Value, c.Value != nil, c.Timestamp, c.TTL)
			}
			b.WriteString("}")
		}
		return b.String()
	}
	return fmt.Sprintf("%+v", v)
}

// TestCQLOverThriftPermissions: with permissions enforced, CQL over Thrift
// runs for a user with every permission on every keyspace and is refused,
// with Cassandra's message, to one whose grants are narrower, since the
// statements are not parsed and run under thriftd's own login.
func TestCQLOverThriftPermissions(t *testing.T) {
	targetHosts(t)
	dir := t.TempDir()
	users, err := auth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		name  string
		setUp func() error
	}{
		{"admin", func() error { return users.SetSuperuser("admin", true) }},
		{"everywhere", func() error {
			for _, p := range auth.Permissions {
				if err := users.Grant("everywhere", p, auth.Resource{}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reader", func() error { return users.Grant("reader", auth.Read, auth.Resource{}) }},
	} {
		if err := users.Add(u.name, "secret-"+u.name); err != nil {
			t.Fatal(err)
		}
		if err := u.setUp(); err != nil {
			t.Fatal(err)
		}
	}
	if err := users.Save(dir); err != nil {
		t.Fatal(err)
	}
	live, err := auth.OpenLive(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	td := startClusterThriftd(t, legacy.HandlerConfig{Auth: live})
	for user, want := range map[string]string{
		"":           "InvalidRequestException: You have not logged in",
		"admin":      "no error",
		"everywhere": "no error",
		"reader":     "InvalidRequestException: User reader has no MODIFY permission on <all keyspaces> or any of its parents",
	} {
		c := dial(t, td.addr)
		if user != "" {
			if err := c.Login(callCtx(t), &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": user, "password": "secret-" + user}}); err != nil {
				t.Fatalf("login %s: %v", user, err)
			}
		}
		_, err := c.ExecuteCql3Query(callCtx(t), []byte("SELECT release_version FROM system.local"), cassandra.Compression_NONE, cassandra.ConsistencyLevel_ONE)
		if got := exceptionOf(err); got != want {
			t.Errorf("execute_cql3_query as %q: %s, want %s", user, got, want)
		}
		_, err = c.PrepareCql3Query(callCtx(t), []byte("SELECT release_version FROM system.local"), cassandra.Compression_NONE)
		if got := exceptionOf(err); got != want {
			t.Errorf("prepare_cql3_query as %q: %s, want %s", user, got, want)
		}
	}
}
