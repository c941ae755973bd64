package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestConvertThenServe is the promise of convert and thriftd's cluster
// backend together: a keyspace converted by `convert data --to cql://`
// into Cassandra 5.0 is served by thriftd --backend cql:// without another
// step. For every fixture model, loaded into thriftd over Badger (on the
// model's clock), the answers of the model's reads are recorded; the
// model is converted with the automatic shapes and with each shape forced
// in turn; thriftd over the 5.0 cluster must give exactly the same
// answers (names, values, order, timestamps; TTLs as the time left: the
// expiry instant over the cluster within 2 s of the one over Badger, as
// the conversion carried it to the moment it wrote each cell). Then a write through
// thriftd lands in the converted table, read back with plain CQL, and a
// write of a name the table has no column for is refused.
func TestConvertThenServe(t *testing.T) {
	hosts := requireEnv(t, "CASSANDRA_TARGET_HOSTS", "serving converted keyspaces", "host:9042 of a Cassandra 5.0 node")
	run := "tbs" + runID(t)
	meta := run + "_meta"
	admin := cqlSession(t, hosts, "", "")
	t.Cleanup(func() { dropServeKeyspaces(t, admin, run+"_") })
	for _, name := range fixtures.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m, err := fixtures.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			srv, err := startFixtureServer(ctx, t.TempDir(), m.LoadTime(), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := srv.stop(ctx); err != nil {
					t.Error(err)
				}
			})
			client := thriftClient(t, srv.addr())
			if err := m.WriteThrift(ctx, client, ""); err != nil {
				t.Fatal(err)
			}
			srv.clock.set(m.Now)
			// Over Badger a TTL is the one written at LoadTime; by Now,
			// Now-LoadTime of it is spent.
			want, ghosts := readModel(ctx, t, client, m, m.Now.Unix()-m.LoadTime().Unix())
			for i, shape := range fixtures.ExpectedShapeNames() {
				forced, err := m.ForcedShapes(ctx, shape)
				if err != nil {
					t.Fatal(err)
				}
				if forced != nil && len(forced) == 0 {
					continue // the shape fits no family of the model
				}
				t.Run(shape, func(t *testing.T) {
					prefix := fmt.Sprintf("%s_%s_%d_", run, name, i)
					args := []string{"data", "--from", "thrift://" + srv.addr() + "/" + m.Keyspace.Name,
						"--to", "cql://" + hosts + "/" + prefix + m.Keyspace.Name, "--meta-keyspace", meta,
						"--now", strconv.FormatInt(m.Now.Unix(), 10), "--quiet", "--consistency", "ONE"}
					for _, f := range sortedKeys(forced) {
						args = append(args, "--shape", f+"="+string(forced[f]))
					}
					started := time.Now()
					if out, errOut, err := liveConvert(ctx, args...); err != nil {
						t.Fatalf("convert %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
					}
					converted := time.Now()
					cfg := daemontest.Config(t)
					cfg.Backend = "cql://" + hosts
					cfg.CQLKeyspacePrefix = prefix
					cfg.CQLMetaKeyspace = meta
					cfg.CQLConsistency = "ONE"
					served := thriftClient(t, daemontest.Start(t, cfg))
					if err := served.SetKeyspace(ctx, m.Keyspace.Name); err != nil {
						t.Fatalf("set_keyspace %s on thriftd over Cassandra 5.0: %v", m.Keyspace.Name, err)
					}
					got, listed := readModel(ctx, t, served, m, 0)
					compareAnswers(t, want, got, started, converted)
					ttls := 0
					for _, a := range want {
						ttls += len(a.left)
					}
					t.Logf("%d read calls answered alike over Badger and over Cassandra 5.0, %d TTL'd columns among them (shapes %v)", len(want), ttls, forced)
					if len(listed) > 0 {
						t.Errorf("thriftd over Cassandra 5.0 lists rows without columns: %v", listed)
					}
					for _, g := range ghosts {
						cols, err := served.GetSlice(ctx, g.key, &cassandra.ColumnParent{ColumnFamily: g.family}, allColumns, cassandra.ConsistencyLevel_ONE)
						if err != nil || len(cols) != 0 {
							t.Errorf("%s[%x], a row of tombstones only: get_slice over Cassandra 5.0 gives %d columns, %v", g.family, g.key, len(cols), err)
						}
					}
					writeThrough(ctx, t, served, admin, m, meta, prefix+m.Keyspace.Name, want)
					updateThrough(ctx, t, served, m)
				})
			}
			// A script (convert data --to file:), applied statement by
			// statement as cqlsh -f applies it, is served too: its catalog
			// rows come with it.
			t.Run("script", func(t *testing.T) {
				prefix := fmt.Sprintf("%s_%s_s_", run, name)
				path := filepath.Join(t.TempDir(), "script.cql")
				started := time.Now()
				args := []string{"data", "--from", "thrift://" + srv.addr() + "/" + m.Keyspace.Name, "--to", "file:" + path,
					"--keyspace", prefix + m.Keyspace.Name, "--meta-keyspace", meta, "--now", strconv.FormatInt(m.Now.Unix(), 10), "--quiet"}
				if out, errOut, err := liveConvert(ctx, args...); err != nil {
					t.Fatalf("convert %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
				}
				applyScript(ctx, t, admin, path)
				applied := time.Now()
				cfg := daemontest.Config(t)
				cfg.Backend = "cql://" + hosts
				cfg.CQLKeyspacePrefix = prefix
				cfg.CQLMetaKeyspace = meta
				cfg.CQLConsistency = "ONE"
				served := thriftClient(t, daemontest.Start(t, cfg))
				if err := served.SetKeyspace(ctx, m.Keyspace.Name); err != nil {
					t.Fatalf("set_keyspace %s on thriftd over the applied script: %v", m.Keyspace.Name, err)
				}
				got, _ := readModel(ctx, t, served, m, 0)
				compareAnswers(t, want, got, started, applied)
			})
		})
	}
}

// answer is one read call and what it returned, TTLs turned into the time
// left.
type answer struct {
	call   string
	result any
	// left maps the position of each TTL'd column in the result's text
	// to the seconds it had left at the read.
	left []int64
	// at is when the answer came back.
	at time.Time
}

// readModel makes the model's reads on every family: a full
// get_range_slices, then for every row get_slice (whole, reversed with a
// count of 2, by the names of its first and last columns, and inside each
// super column), get_count, and one multiget_slice of every key. Each
// answer's TTLs are kept as the time left at the read (the server's clock:
// the model's Now over Badger, whose TTLs are the original ones; the real
// clock over the cluster, whose TTLs are already what is left).
func readModel(ctx context.Context, t *testing.T, client *cassandra.CassandraClient, m *fixtures.Model, spent int64) (out []answer, ghosts []ghost) {
	t.Helper()
	all := allColumns
	for _, family := range m.FamilyNames() {
		f, _ := m.Family(family)
		parent := &cassandra.ColumnParent{ColumnFamily: family}
		rows, err := client.GetRangeSlices(ctx, parent, all, &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 100000}, cassandra.ConsistencyLevel_ONE)
		if err != nil {
			t.Fatalf("%s: get_range_slices: %v", family, thriftError(err))
		}
		// A row holding only tombstones is listed by thriftd over Badger,
		// as by Cassandra 3.11 (a range ghost), and not over a cluster
		// (Capabilities.RangeGhosts false): the ghosts are set apart and
		// asserted on their own.
		live := rows[:0:0]
		for _, r := range rows {
			if len(r.Columns) == 0 {
				ghosts = append(ghosts, ghost{family, r.Key})
				continue
			}
			live = append(live, r)
		}
		rows = live
		out = append(out, answerOf(spent, "get_range_slices "+family, rows))
		var keys [][]byte
		for _, r := range rows {
			keys = append(keys, r.Key)
			cols, err := client.GetSlice(ctx, r.Key, parent, all, cassandra.ConsistencyLevel_ONE)
			if err != nil {
				t.Fatalf("%s[%x]: get_slice: %v", family, r.Key, thriftError(err))
			}
			out = append(out, answerOf(spent, fmt.Sprintf("get_slice %s[%x]", family, r.Key), cols))
			rev := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Reversed: true, Count: 2}}
			cols, err = client.GetSlice(ctx, r.Key, parent, rev, cassandra.ConsistencyLevel_ONE)
			if err != nil {
				t.Fatalf("%s[%x]: reversed get_slice: %v", family, r.Key, thriftError(err))
			}
			out = append(out, answerOf(spent, fmt.Sprintf("reversed get_slice %s[%x]", family, r.Key), cols))
			n, err := client.GetCount(ctx, r.Key, parent, all, cassandra.ConsistencyLevel_ONE)
			if err != nil {
				t.Fatalf("%s[%x]: get_count: %v", family, r.Key, thriftError(err))
			}
			out = append(out, answer{call: fmt.Sprintf("get_count %s[%x]", family, r.Key), result: n})
			if len(r.Columns) == 0 {
				continue
			}
			// A range from the row's second name to its last, and the
			// same range reversed with a count of 1.
			if len(r.Columns) > 1 {
				lo, hi := columnName(r.Columns[1]), columnName(r.Columns[len(r.Columns)-1])
				for _, sr := range []*cassandra.SliceRange{{Start: lo, Finish: hi, Count: 100}, {Start: hi, Finish: lo, Reversed: true, Count: 1}} {
					cols, err := client.GetSlice(ctx, r.Key, parent, &cassandra.SlicePredicate{SliceRange: sr}, cassandra.ConsistencyLevel_ONE)
					if err != nil {
						t.Fatalf("%s[%x]: get_slice of a range: %v", family, r.Key, thriftError(err))
					}
					out = append(out, answerOf(spent, fmt.Sprintf("get_slice %s[%x] from %x to %x reversed %v", family, r.Key, sr.Start, sr.Finish, sr.Reversed), cols))
				}
			}
			names := [][]byte{columnName(r.Columns[0]), columnName(r.Columns[len(r.Columns)-1])}
			cols, err = client.GetSlice(ctx, r.Key, parent, &cassandra.SlicePredicate{ColumnNames: names}, cassandra.ConsistencyLevel_ONE)
			if err != nil {
				t.Fatalf("%s[%x]: get_slice by names: %v", family, r.Key, thriftError(err))
			}
			out = append(out, answerOf(spent, fmt.Sprintf("get_slice by names %s[%x]", family, r.Key), cols))
			if !f.Def.Super {
				continue
			}
			for _, c := range r.Columns {
				super := columnName(c)
				in := &cassandra.ColumnParent{ColumnFamily: family, SuperColumn: super}
				cols, err := client.GetSlice(ctx, r.Key, in, all, cassandra.ConsistencyLevel_ONE)
				if err != nil {
					t.Fatalf("%s[%x][%x]: get_slice: %v", family, r.Key, super, thriftError(err))
				}
				out = append(out, answerOf(spent, fmt.Sprintf("get_slice %s[%x][%x]", family, r.Key, super), cols))
			}
		}
		if len(keys) > 0 {
			multi, err := client.MultigetSlice(ctx, keys, parent, all, cassandra.ConsistencyLevel_ONE)
			if err != nil {
				t.Fatalf("%s: multiget_slice: %v", family, thriftError(err))
			}
			out = append(out, answerOf(spent, "multiget_slice "+family, multi))
		}
	}
	return out, ghosts
}

// ghost is a row that holds only tombstones.
type ghost struct {
	family string
	key    []byte
}

// allColumns selects every column of a row.
var allColumns = &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100000}}

func columnName(c *cassandra.ColumnOrSuperColumn) []byte {
	switch {
	case c.Column != nil:
		return c.Column.Name
	case c.SuperColumn != nil:
		return c.SuperColumn.Name
	case c.CounterColumn != nil:
		return c.CounterColumn.Name
	case c.CounterSuperColumn != nil:
		return c.CounterSuperColumn.Name
	}
	return nil
}

// answerOf keeps a result with its TTLs replaced by 0 and listed, in
// order, as the time left: over Badger (a TTL the column was written
// with, at the model's LoadTime) the original TTL less the time from
// LoadTime to Now; over the cluster the TTL itself.
func answerOf(spent int64, call string, result any) answer {
	a := answer{call: call, at: time.Now()}
	// Deep copy through JSON so that zeroing TTLs leaves the result alone.
	b, _ := json.Marshal(result)
	var copied any
	switch result.(type) {
	case []*cassandra.KeySlice:
		copied = &[]*cassandra.KeySlice{}
	case []*cassandra.ColumnOrSuperColumn:
		copied = &[]*cassandra.ColumnOrSuperColumn{}
	case map[string][]*cassandra.ColumnOrSuperColumn:
		copied = &map[string][]*cassandra.ColumnOrSuperColumn{}
	}
	if err := json.Unmarshal(b, copied); err != nil {
		panic(err)
	}
	visitColumns(copied, func(c *cassandra.Column) {
		if c.TTL == nil {
			return
		}
		a.left = append(a.left, int64(*c.TTL)-spent)
		c.TTL = nil
	})
	a.result = copied
	return a
}

// visitColumns calls fn on every Column of a result, in a fixed order.
func visitColumns(v any, fn func(*cassandra.Column)) {
	cols := func(cs []*cassandra.ColumnOrSuperColumn) {
		for _, c := range cs {
			if c.Column != nil {
				fn(c.Column)
			}
			if c.SuperColumn != nil {
				for _, sc := range c.SuperColumn.Columns {
					fn(sc)
				}
			}
		}
	}
	switch r := v.(type) {
	case *[]*cassandra.KeySlice:
		for _, ks := range *r {
			cols(ks.Columns)
		}
	case *[]*cassandra.ColumnOrSuperColumn:
		cols(*r)
	case *map[string][]*cassandra.ColumnOrSuperColumn:
		keys := make([]string, 0, len(*r))
		for k := range *r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cols((*r)[k])
		}
	}
}

// compareAnswers asserts that every read gave the same result, and that
// each TTL'd column expires at the same instant: over Badger the time it
// had left at the model's Now; convert wrote that as the TTL of its write,
// between convertStart and convertEnd, so over the cluster the read's time
// plus the TTL left must fall in that window (moved by the time left),
// within 2 s.
func compareAnswers(t *testing.T, want, got []answer, convertStart, convertEnd time.Time) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d answers over Cassandra 5.0, %d over Badger", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.call != g.call {
			t.Fatalf("answer %d: call %s over Badger, %s over Cassandra 5.0", i, w.call, g.call)
		}
		if !reflect.DeepEqual(w.result, g.result) {
			wb, _ := json.Marshal(w.result)
			gb, _ := json.Marshal(g.result)
			t.Errorf("%s:\nover Badger:          %s\nover Cassandra 5.0:   %s", w.call, wb, gb)
			continue
		}
		if len(w.left) != len(g.left) {
			t.Errorf("%s: %d TTL'd columns over Badger, %d over Cassandra 5.0", w.call, len(w.left), len(g.left))
			continue
		}
		for j := range w.left {
			// convert wrote the time left at the model's Now while it
			// ran: the cluster's expiry instant falls in that window, as
			// read from the cluster's TTL at the read, within 2 s.
			left := time.Duration(w.left[j]) * time.Second
			expires := g.at.Add(time.Duration(g.left[j]) * time.Second)
			if lo, hi := convertStart.Add(left-2*time.Second), convertEnd.Add(left+2*time.Second); expires.Before(lo) || expires.After(hi) {
				t.Errorf("%s: TTL'd column %d: %d s left at the model's Now over Badger; over Cassandra 5.0 %d s left at %s, expiring at %s, outside [%s, %s]",
					w.call, j, w.left[j], g.left[j], g.at.Format(time.RFC3339), expires.Format(time.RFC3339), lo.Format(time.RFC3339), hi.Format(time.RFC3339))
			}
		}
	}
}

// writeThrough writes, through thriftd over the cluster, one cell of every
// family (the name of the first column of its first row, in a new row
// key where the key validator takes text, else the same row) and reads
// it back with plain CQL in the converted table; then a name the table
// has no column for (pivot and pure static tables) is refused.
func writeThrough(ctx context.Context, t *testing.T, client *cassandra.CassandraClient, admin *gocql.Session, m *fixtures.Model, meta, cqlKeyspace string, want []answer) {
	t.Helper()
	for _, family := range m.FamilyNames() {
		f, _ := m.Family(family)
		var first *cassandra.KeySlice
		for _, a := range want {
			if a.call == "get_range_slices "+family {
				rows := *a.result.(*[]*cassandra.KeySlice)
				for _, r := range rows {
					if len(r.Columns) > 0 {
						first = r
						break
					}
				}
			}
		}
		if first == nil {
			continue
		}
		shape := familyShape(ctx, t, admin, meta, cqlKeyspace, family)
		ts := time.Now().UnixMicro()
		parent := &cassandra.ColumnParent{ColumnFamily: family}
		c := first.Columns[0]
		var super, name, value []byte
		switch {
		case c.Column != nil:
			name, value = c.Column.Name, c.Column.Value
		case c.SuperColumn != nil:
			super, name, value = c.SuperColumn.Name, c.SuperColumn.Columns[0].Name, c.SuperColumn.Columns[0].Value
			parent.SuperColumn = super
		case c.CounterColumn != nil:
			name = c.CounterColumn.Name
		case c.CounterSuperColumn != nil:
			super, name = c.CounterSuperColumn.Name, c.CounterSuperColumn.Columns[0].Name
			parent.SuperColumn = super
		}
		if value == nil {
			value = []byte{} // an empty value, which JSON left out
		}
		counter := c.CounterColumn != nil || c.CounterSuperColumn != nil
		if counter {
			if err := client.Add(ctx, first.Key, parent, &cassandra.CounterColumn{Name: name, Value: 5}, cassandra.ConsistencyLevel_ONE); err != nil {
				t.Fatalf("%s: add through thriftd over Cassandra 5.0: %v", family, thriftError(err))
			}
		} else {
			ttl := int32(3600)
			if err := client.Insert(ctx, first.Key, parent, &cassandra.Column{Name: name, Value: value, Timestamp: &ts, TTL: &ttl}, cassandra.ConsistencyLevel_ONE); err != nil {
				t.Fatalf("%s: insert through thriftd over Cassandra 5.0: %v", family, thriftError(err))
			}
		}
		col, where, args := cqlAddress(t, f, shape, first.Key, super, name)
		table := supercol.QuoteIdent(cqlKeyspace) + "." + supercol.QuoteIdent(family)
		if counter {
			var v int64
			if err := admin.Query("SELECT "+col+" FROM "+table+where, args...).Consistency(gocql.One).ScanContext(ctx, &v); err != nil {
				t.Fatalf("%s: read the counter back with CQL: %v", family, err)
			}
			if before := counterOf(c, name); v != before+5 {
				t.Errorf("%s: counter %s is %d in the converted table after adding 5 to %d through thriftd", family, col, v, before)
			}
		} else {
			var v cqlBytes
			var wt int64
			var ttl int
			if err := admin.Query("SELECT "+col+", writetime("+col+"), ttl("+col+") FROM "+table+where, args...).Consistency(gocql.One).ScanContext(ctx, &v, &wt, &ttl); err != nil {
				t.Fatalf("%s: read the cell back with CQL: %v", family, err)
			}
			if string(v) != string(value) || wt != ts || ttl <= 0 || ttl > 3600 {
				t.Errorf("%s: column %s of the converted table holds %x at %d with TTL %d; thriftd wrote %x at %d with TTL 3600", family, col, []byte(v), wt, ttl, value, ts)
			}
			// remove deletes the cell; batch_mutate writes it again.
			path := &cassandra.ColumnPath{ColumnFamily: family, SuperColumn: super, Column: name}
			if err := client.Remove(ctx, first.Key, path, ts+1, cassandra.ConsistencyLevel_ONE); err != nil {
				t.Fatalf("%s: remove through thriftd over Cassandra 5.0: %v", family, thriftError(err))
			}
			var left []cqlBytes
			v = nil
			iter := admin.Query("SELECT "+col+" FROM "+table+where, args...).Consistency(gocql.One).IterContext(ctx)
			for iter.Scan(&v) {
				if v != nil {
					left = append(left, append(cqlBytes{}, v...))
				}
				v = nil
			}
			if err := iter.Close(); err != nil {
				t.Fatalf("%s: read the removed cell with CQL: %v", family, err)
			}
			if len(left) != 0 {
				t.Errorf("%s: column %s still holds %x after remove through thriftd", family, col, left)
			}
			cosc := &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{Name: name, Value: value, Timestamp: &[]int64{ts + 2}[0]}}
			if super != nil {
				cosc = &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: super, Columns: []*cassandra.Column{cosc.Column}}}
			}
			muts := map[string]map[string][]*cassandra.Mutation{string(first.Key): {family: {{ColumnOrSupercolumn: cosc}}}}
			if err := client.BatchMutate(ctx, muts, cassandra.ConsistencyLevel_ONE); err != nil {
				t.Fatalf("%s: batch_mutate through thriftd over Cassandra 5.0: %v", family, thriftError(err))
			}
			var ttlNull *int
			if err := admin.Query("SELECT "+col+", writetime("+col+"), ttl("+col+") FROM "+table+where, args...).Consistency(gocql.One).ScanContext(ctx, &v, &wt, &ttlNull); err != nil {
				t.Fatalf("%s: read the batch_mutate cell back with CQL: %v", family, err)
			}
			if string(v) != string(value) || wt != ts+2 || ttlNull != nil {
				t.Errorf("%s: column %s holds %x at %d (TTL %v) after batch_mutate of %x at %d without TTL", family, col, []byte(v), wt, ttlNull, value, ts+2)
			}
		}
		if !counter && super == nil && shape.Shape == string(supercol.ShapeStatic) {
			casThrough(ctx, t, client, admin, f, shape, table, first, family)
		}
		if counter || (shape.Shape == string(supercol.ShapeCompact)) {
			continue
		}
		// A name the table has no column for is refused, not dropped,
		// until the family declares it.
		if stray := strayName(f, shape); stray != nil && !shape.Mixed {
			err := client.Insert(ctx, first.Key, parent, &cassandra.Column{Name: stray, Value: value, Timestamp: &ts}, cassandra.ConsistencyLevel_ONE)
			if ire, ok := err.(*cassandra.InvalidRequestException); !ok || !strings.Contains(ire.Why, "no column for it") {
				t.Errorf("%s (%s): insert of name %x the table has no column for: %v; want InvalidRequestException", family, shape.Shape, stray, err)
			}
		}
		declareThrough(ctx, t, client, admin, f, shape, meta, cqlKeyspace, table, first.Key, super, family)
	}
}

// casThrough makes conditional writes (Thrift cas) through thriftd to a
// row of a family converted to a static table, after writeThrough wrote
// its first column again, and reads the outcome back with CQL: a cas
// expecting another value fails and reports the current one; a cas
// expecting the current value applies even to another column of the row
// (an expected named column need not be among the updates, unlike on a
// compact table); a cas on the row emptied by a row deletion applies
// once, the next one fails.
func casThrough(ctx context.Context, t *testing.T, client *cassandra.CassandraClient, admin *gocql.Session, f *supercol.Family, sh storedShape, table string, row *cassandra.KeySlice, family string) {
	t.Helper()
	cl := cassandra.ConsistencyLevel_ONE
	serial := cassandra.ConsistencyLevel_SERIAL
	isNamed := func(name []byte) bool {
		for _, c := range sh.Columns {
			if c.Legacy != nil && nameTypeOf(f).Compare(c.Legacy, name) == 0 {
				return true
			}
		}
		return false
	}
	var cols []*cassandra.Column
	for _, c := range row.Columns {
		if c.Column != nil && isNamed(c.Column.Name) {
			cols = append(cols, c.Column)
		}
	}
	if len(cols) == 0 {
		return
	}
	first := cols[0]
	value := first.Value
	if value == nil {
		value = []byte{}
	}
	// Thrift requires a timestamp of each update; the write takes the
	// transaction's.
	ts := time.Now().UnixMicro()
	if len(value) > 0 {
		// Another value of the same length, which the validator takes.
		wrong := append([]byte{}, value...)
		wrong[len(wrong)-1] ^= 1
		res, err := client.Cas(ctx, row.Key, family, []*cassandra.Column{{Name: first.Name, Value: wrong}}, []*cassandra.Column{{Name: first.Name, Value: value, Timestamp: &ts}}, serial, cl)
		if err != nil {
			t.Fatalf("%s (%s): cas through thriftd over Cassandra 5.0: %v", family, sh.Shape, thriftError(err))
		}
		if res.Success || len(res.CurrentValues) != 1 || string(res.CurrentValues[0].Value) != string(value) {
			t.Errorf("%s: cas expecting %x of %x, which holds %x: success %v, current %v", family, wrong, first.Name, value, res.Success, res.CurrentValues)
		}
	}
	if len(cols) > 1 {
		other := cols[1]
		res, err := client.Cas(ctx, row.Key, family, []*cassandra.Column{{Name: first.Name, Value: value}}, []*cassandra.Column{{Name: other.Name, Value: other.Value, Timestamp: &ts}}, serial, cl)
		if err != nil {
			t.Fatalf("%s: cas expecting %x, writing %x: %v", family, first.Name, other.Name, thriftError(err))
		}
		if !res.Success {
			t.Errorf("%s: cas expecting the value %x holds, writing another column: not applied, current %v", family, first.Name, res.CurrentValues)
		}
		col, where, args := cqlAddress(t, f, sh, row.Key, nil, other.Name)
		var wt int64
		if err := admin.Query("SELECT writetime("+col+") FROM "+table+where, args...).Consistency(gocql.Serial).ScanContext(ctx, &wt); err != nil {
			t.Fatalf("%s: read the cas write back with CQL: %v", family, err)
		}
		if other.Timestamp != nil && wt <= *other.Timestamp {
			t.Errorf("%s: column %s keeps its writetime %d after a cas wrote it (was %d)", family, col, wt, *other.Timestamp)
		}
	}
	t.Logf("%s (%s, mixed %v): cas through thriftd on %d named columns of a row", family, sh.Shape, sh.Mixed, min(len(cols), 2))
	// The row deleted, an empty expected list finds it empty once.
	if err := client.Remove(ctx, row.Key, &cassandra.ColumnPath{ColumnFamily: family}, time.Now().UnixMicro(), cl); err != nil {
		t.Fatalf("%s: remove the row: %v", family, thriftError(err))
	}
	for i, want := range []bool{true, false} {
		res, err := client.Cas(ctx, row.Key, family, nil, []*cassandra.Column{{Name: first.Name, Value: value, Timestamp: &ts}}, serial, cl)
		if err != nil {
			t.Fatalf("%s: cas %d on the emptied row: %v", family, i, thriftError(err))
		}
		if res.Success != want {
			t.Errorf("%s: cas %d expecting an empty row: success %v, want %v (current %v)", family, i, res.Success, want, res.CurrentValues)
		}
	}
}

// declareThrough declares a new column of a family converted to a pivot
// or static table with system_update_column_family through thriftd: a
// table without a compact part gains a typed column for it, which a write
// through thriftd fills and CQL reads back; a mixed table, whose compact
// part may hold cells of that name, refuses it.
func declareThrough(ctx context.Context, t *testing.T, client *cassandra.CassandraClient, admin *gocql.Session, f *supercol.Family, sh storedShape, meta, cqlKeyspace, table string, key, super []byte, family string) {
	t.Helper()
	name := strayName(f, sh)
	if name == nil {
		return
	}
	ks, err := client.DescribeKeyspace(ctx, f.Keyspace)
	if err != nil {
		t.Fatalf("describe_keyspace: %v", thriftError(err))
	}
	var cf *cassandra.CfDef
	for _, d := range ks.CfDefs {
		if d.Name == family {
			cf = d
		}
	}
	if cf == nil {
		t.Fatalf("%s: not described", family)
	}
	cf.ColumnMetadata = append(cf.ColumnMetadata, &cassandra.ColumnDef{Name: name, ValidationClass: "BytesType"})
	_, err = client.SystemUpdateColumnFamily(ctx, cf)
	if sh.Mixed {
		if ire, ok := err.(*cassandra.InvalidRequestException); !ok || !strings.Contains(ire.Why, "converted to a mixed static table") {
			t.Errorf("%s (mixed): declaring column %x: %v; want InvalidRequestException", family, name, thriftError(err))
		}
		return
	}
	if err != nil {
		t.Fatalf("%s (%s): declaring column %x through thriftd: %v", family, sh.Shape, name, thriftError(err))
	}
	ts := time.Now().UnixMicro()
	parent := &cassandra.ColumnParent{ColumnFamily: family, SuperColumn: super}
	if err := client.Insert(ctx, key, parent, &cassandra.Column{Name: name, Value: []byte("declared"), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE); err != nil {
		t.Fatalf("%s (%s): insert into the declared column %x: %v", family, sh.Shape, name, thriftError(err))
	}
	now := familyShape(ctx, t, admin, meta, cqlKeyspace, family)
	col, where, args := cqlAddress(t, f, now, key, super, name)
	var v cqlBytes
	if err := admin.Query("SELECT "+col+" FROM "+table+where, args...).Consistency(gocql.One).ScanContext(ctx, &v); err != nil {
		t.Fatalf("%s: read the declared column %s back with CQL: %v", family, col, err)
	}
	if string(v) != "declared" {
		t.Errorf("%s: the declared column %s holds %q, want %q", family, col, []byte(v), "declared")
	}
	t.Logf("%s (%s): declared column %s added through thriftd and written", family, sh.Shape, col)
}

// updateThrough changes the comment of every family of the model with
// system_update_column_family through thriftd, as applications that
// declare their schema at start-up do, and reads it back with
// describe_keyspace: a change of options keeps the converted table.
func updateThrough(ctx context.Context, t *testing.T, client *cassandra.CassandraClient, m *fixtures.Model) {
	t.Helper()
	ks, err := client.DescribeKeyspace(ctx, m.Keyspace.Name)
	if err != nil {
		t.Fatalf("describe_keyspace %s: %v", m.Keyspace.Name, thriftError(err))
	}
	for _, cf := range ks.CfDefs {
		comment := "updated through thriftd: " + cf.Name
		cf.Comment = &comment
		if _, err := client.SystemUpdateColumnFamily(ctx, cf); err != nil {
			t.Errorf("%s: system_update_column_family of the comment: %v", cf.Name, thriftError(err))
		}
	}
	again, err := client.DescribeKeyspace(ctx, m.Keyspace.Name)
	if err != nil {
		t.Fatalf("describe_keyspace %s: %v", m.Keyspace.Name, thriftError(err))
	}
	for _, cf := range again.CfDefs {
		if cf.Comment == nil || *cf.Comment != "updated through thriftd: "+cf.Name {
			t.Errorf("%s: comment %v after system_update_column_family", cf.Name, cf.Comment)
		}
	}
}

// applyScript runs a convert script's statements one by one, waiting for
// schema agreement after each schema statement, as cqlsh -f does.
func applyScript(ctx context.Context, t *testing.T, s *gocql.Session, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "--") {
			lines = append(lines, l)
		}
	}
	n := 0
	for _, stmt := range strings.Split(strings.Join(lines, "\n"), ";\n") {
		if stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";")); stmt == "" {
			continue
		}
		if err := s.Query(stmt).Consistency(gocql.One).ExecContext(ctx); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if strings.HasPrefix(stmt, "CREATE ") {
			if err := s.AwaitSchemaAgreement(ctx); err != nil {
				t.Fatal(err)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatalf("%s holds no statement", path)
	}
}

// storedShape is the part of a family's catalog shape the test reads.
type storedShape struct {
	Shape   string `json:"shape"`
	Mixed   bool   `json:"mixed"`
	Columns []struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Legacy []byte `json:"legacy"`
	} `json:"columns"`
}

func familyShape(ctx context.Context, t *testing.T, admin *gocql.Session, meta, cqlKeyspace, family string) storedShape {
	t.Helper()
	var text string
	if err := admin.Query("SELECT shape FROM "+meta+".families WHERE keyspace_name = ? AND family_name = ?", cqlKeyspace, family).
		Consistency(gocql.One).ScanContext(ctx, &text); err != nil {
		t.Fatalf("%s: the catalog row convert recorded: %v", family, err)
	}
	var sh storedShape
	if err := json.Unmarshal([]byte(text), &sh); err != nil {
		t.Fatal(err)
	}
	return sh
}

// cqlAddress is the CQL column holding a legacy cell and the WHERE clause
// of its row, from the recorded shape.
func cqlAddress(t *testing.T, f *supercol.Family, sh storedShape, key, super, name []byte) (string, string, []any) {
	t.Helper()
	var conds []string
	var args []any
	col := ""
	named := false
	for _, c := range sh.Columns {
		if c.Legacy != nil && nameTypeOf(f).Compare(c.Legacy, name) == 0 {
			col, named = supercol.QuoteIdent(c.Name), true
		}
	}
	// A CompositeType key or name spreads over one column per component.
	nkey, nclust := 0, 0
	for _, c := range sh.Columns {
		switch c.Kind {
		case "partition_key":
			nkey++
		case "clustering":
			nclust++
		}
	}
	values := splitComponents(key, nkey)
	if super != nil {
		values = append(values, super)
		nclust--
	}
	if !named {
		values = append(values, splitComponents(name, nclust)...)
	}
	i := 0
	for _, c := range sh.Columns {
		switch c.Kind {
		case "partition_key", "clustering":
			if i < len(values) {
				conds = append(conds, supercol.QuoteIdent(c.Name)+" = ?")
				args = append(args, cqlBytes(values[i]))
				i++
			}
		case "regular":
			if !named && c.Legacy == nil {
				col = supercol.QuoteIdent(c.Name)
			}
		}
	}
	if col == "" || i != len(values) {
		t.Fatalf("%s: no CQL column for %x in %+v", f.Def.Name, name, sh)
	}
	return col, " WHERE " + strings.Join(conds, " AND "), args
}

// splitComponents is b, or its n components when n > 1 (a CompositeType
// value: each component's 2-byte length, bytes and end-of-component byte).
func splitComponents(b []byte, n int) [][]byte {
	if n <= 1 {
		return [][]byte{b}
	}
	var out [][]byte
	for rest := b; len(rest) >= 3 && len(out) < n; {
		l := int(rest[0])<<8 | int(rest[1])
		out = append(out, rest[2:2+l])
		rest = rest[2+l+1:]
	}
	for len(out) < n {
		out = append(out, []byte{})
	}
	return out
}

// strayName is a name of the family's name type that no named column
// holds, or nil when none is found.
func strayName(f *supercol.Family, sh storedShape) []byte {
	nt := nameTypeOf(f)
	for _, text := range []string{"thriftbridge_stray", "4242424242", "00000000-0000-1000-8000-000000000042"} {
		b, err := nt.FromString(text)
		if err != nil || nt.Validate(b) != nil {
			continue
		}
		taken := false
		for _, c := range sh.Columns {
			taken = taken || (c.Legacy != nil && nt.Compare(c.Legacy, b) == 0)
		}
		if !taken {
			return b
		}
	}
	return nil
}

func counterOf(c *cassandra.ColumnOrSuperColumn, name []byte) int64 {
	if c.CounterColumn != nil {
		return c.CounterColumn.Value
	}
	for _, sc := range c.CounterSuperColumn.Columns {
		if string(sc.Name) == string(name) {
			return sc.Value
		}
	}
	return 0
}

// cqlBytes is a value in its column's wire form, both ways.
type cqlBytes []byte

func (b cqlBytes) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return b, nil }

func (b *cqlBytes) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		*b = nil // null
		return nil
	}
	*b = append((*b)[:0:0], data...)
	return nil
}

func sortedKeys(m map[string]supercol.Shape) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// dropServeKeyspaces drops the run's keyspaces (the converted ones and
// its metadata keyspace).
func dropServeKeyspaces(t *testing.T, s *gocql.Session, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	iter := s.Query("SELECT keyspace_name FROM system_schema.keyspaces").IterContext(ctx)
	var name string
	var drop []string
	for iter.Scan(&name) {
		if strings.HasPrefix(name, prefix) {
			drop = append(drop, name)
		}
	}
	if err := iter.Close(); err != nil {
		t.Errorf("list keyspaces: %v", err)
		return
	}
	for _, ks := range drop {
		if err := s.Query(`DROP KEYSPACE IF EXISTS "` + ks + `"`).ExecContext(ctx); err != nil {
			t.Errorf("drop keyspace %s: %v", ks, err)
		}
	}
}

// nameTypeOf is the type of a family's cell names: the subcomparator of a
// Super family, else the comparator.
func nameTypeOf(f *supercol.Family) marshal.Type {
	if f.Def.Super {
		return f.SubComparator
	}
	return f.Comparator
}

// TestScriptCatalog: a file: script ends with thriftd's catalog rows
// (after every data statement, so that a script applied with cqlsh is
// served once whole), in the metadata keyspace --meta-keyspace names;
// --no-metadata leaves them out and changes nothing else; convert schema
// records them too; verify reads past them.
func TestScriptCatalog(t *testing.T) {
	dir := t.TempDir()
	if _, err := convert(t, "fixtures", "--name", "blog", "--out", dir); err != nil {
		t.Fatal(err)
	}
	from := []string{"--from", "json:" + dir + "/data", "--schema", dir + "/schema.json"}
	script := func(name string, args ...string) string {
		t.Helper()
		path := dir + "/" + name
		all := append(append([]string{args[0], "--to", "file:" + path}, args[1:]...), from...)
		if _, err := convert(t, all...); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	with := script("with.cql", "data", "--now", "1700000000", "--quiet", "--shape", "Comments=pivot")
	without := script("without.cql", "data", "--now", "1700000000", "--quiet", "--shape", "Comments=pivot", "--no-metadata")
	other := script("other.cql", "data", "--now", "1700000000", "--quiet", "--shape", "Comments=pivot", "--meta-keyspace", "legacy_catalog")
	schema := script("schema.cql", "schema", "--shape", "Comments=pivot")

	catalog, ok := strings.CutPrefix(with, without)
	if !ok || strings.Contains(without, "thriftbridge_meta") {
		t.Fatalf("the script with its catalog is not the script without it and then the catalog:\n%s", with)
	}
	lines := strings.Split(strings.TrimSpace(catalog), "\n")
	if len(lines) != 1+3+4+1 || !strings.HasPrefix(lines[len(lines)-1], `INSERT INTO thriftbridge_meta.keyspaces (keyspace_name, def) VALUES ('Blog', '{"name":"Blog","strategy_class":"org.apache.cassandra.locator.SimpleStrategy"`) {
		t.Fatalf("catalog: the metadata schema, one row per family (4) and the keyspace last; got:\n%s", catalog)
	}
	if !strings.Contains(other, "INSERT INTO legacy_catalog.families") || strings.Contains(other, "thriftbridge_meta") {
		t.Errorf("--meta-keyspace legacy_catalog: the catalog goes elsewhere:\n%s", other)
	}
	if !strings.HasSuffix(schema, catalog) {
		t.Errorf("convert schema does not end with the same catalog:\n%s", schema)
	}
	// The pivot family's shape names the legacy subcolumn each column holds.
	var comments string
	for _, l := range lines {
		if strings.Contains(l, "'Comments'") {
			comments = l
		}
	}
	shapeText := comments[strings.LastIndex(comments, ", '")+3 : len(comments)-len("');")]
	var sh storedShape
	if err := json.Unmarshal([]byte(strings.ReplaceAll(shapeText, "''", "'")), &sh); err != nil {
		t.Fatalf("shape of Comments: %v\n%s", err, shapeText)
	}
	var legacy []string
	for _, c := range sh.Columns {
		if c.Legacy != nil {
			legacy = append(legacy, string(c.Legacy))
		}
	}
	if sh.Shape != "pivot" || strings.Join(legacy, ",") != "commenter,text" {
		t.Errorf("Comments: shape %s with named subcolumns %v; want pivot with commenter,text", sh.Shape, legacy)
	}
	if out, err := convert(t, append([]string{"verify", "--to", "file:" + dir + "/with.cql", "--now", "1700000000", "--shape", "Comments=pivot"}, from...)...); err != nil || !strings.Contains(out, "OK") {
		t.Errorf("verify of the script with its catalog: %v\n%s", err, out)
	}
}
