package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// vecValidationFile is validation_errors.json: one request per case, in
// the order they were sent to one node.
type vecValidationFile struct {
	Keyspace string              `json:"keyspace"`
	Cases    []vecValidationCase `json:"cases"`
}

type vecValidationCase struct {
	Category    string          `json:"category"`
	Description string          `json:"description"`
	Method      string          `json:"method"`
	Request     json.RawMessage `json:"request"`
	// Result is "accepted" or "error".
	Result    string `json:"result"`
	Exception string `json:"exception"`
	Why       string `json:"why"`
	// Type and MessageNormalized describe a TApplicationException.
	Type              *int32          `json:"type"`
	MessageNormalized string          `json:"message_normalized"`
	Note              string          `json:"note"`
	ServerLogErrors   []string        `json:"server_log_errors"`
	Returned          json.RawMessage `json:"returned"`
}

// vecValidationRequest is the readable summary a case records. What it
// leaves out takes the file's defaults: key 6b ('k'), family Std, column
// name 63 ('c'), value 76 ('v'), timestamp 1000. Inside "column", a
// missing value or timestamp is one the request did not set.
type vecValidationRequest struct {
	KeyHex           *string       `json:"key_hex"`
	KeysHex          []string      `json:"keys_hex"`
	ColumnFamily     string        `json:"column_family"`
	ColumnParent     *vecParent    `json:"column_parent"`
	ColumnPath       *vecPath      `json:"column_path"`
	Path             *vecPath      `json:"path"`
	Column           *vecCol       `json:"column"`
	CounterColumn    *vecCol       `json:"counter_column"`
	Deletion         *vecDeletion  `json:"deletion"`
	SliceRange       *vecRange     `json:"slice_range"`
	Range            *vecKeyRange  `json:"range"`
	ConsistencyLevel string        `json:"consistency_level"`
	Keyspace         *string       `json:"keyspace"`
	Name             string        `json:"name"`
	ColumnType       *string       `json:"column_type"`
	ComparatorType   *string       `json:"comparator_type"`
	Cfname           string        `json:"cfname"`
	Timestamp        *int64        `json:"timestamp"`
	IndexClause      *vecIndexExpr `json:"index_clause"`
	SuperColumn      *struct {
		NameHex string   `json:"name_hex"`
		Columns []vecCol `json:"columns"`
	} `json:"super_column"`
	// Predicate, Mutation and Cosc are an object or a word ("both",
	// "column+super_column") naming a shape.
	Predicate   json.RawMessage                         `json:"predicate"`
	Mutation    json.RawMessage                         `json:"mutation"`
	Cosc        json.RawMessage                         `json:"cosc"`
	MutationMap map[string]map[string][]json.RawMessage `json:"mutation_map"`
}

type vecIndexExpr struct {
	Expressions []struct {
		ColumnNameHex string `json:"column_name_hex"`
		Op            string `json:"op"`
		ValueHex      string `json:"value_hex"`
	} `json:"expressions"`
}

const (
	vecDefaultKey    = "6b"
	vecDefaultFamily = "Std"
	vecCQL3Family    = "cql3tab"
	// vecGeneratorComparator is the comparator the generator gave families
	// it created without naming one: the reasons it recorded render column
	// names as text ("[ValLong][c]") and SuperNoSub is described back with
	// it.
	vecGeneratorComparator = "UTF8Type"
)

// vecFamilyFromDescription names the family of the one case whose summary
// omits it while its description says which kind of family it targets.
var vecFamilyFromDescription = map[string]string{
	"Deletion with super_column AND predicate on a Super CF (accepted: deletes subcolumns)": "Super1",
}

// vecValidationFamilies are the families of validation_errors.json besides
// the one-per-comparator t* families, as its column_families describes
// them (cql3tab, a CQL3 table, has no Thrift equivalent on thriftd).
func vecValidationFamilies() []*cassandra.CfDef {
	cf := func(name, comparator string, edit func(cf *cassandra.CfDef)) *cassandra.CfDef {
		d := cassandra.NewCfDef()
		d.Name, d.ComparatorType = name, comparator
		if edit != nil {
			edit(d)
		}
		return d
	}
	super := func(sub string) func(*cassandra.CfDef) {
		return func(d *cassandra.CfDef) { d.ColumnType, d.SubcomparatorType = "Super", vecPtr(sub) }
	}
	counter := func(d *cassandra.CfDef) { d.DefaultValidationClass = vecPtr("CounterColumnType") }
	return []*cassandra.CfDef{
		cf("Std", "BytesType", nil),
		cf("Super1", "LongType", super("UTF8Type")),
		cf("Counter1", "UTF8Type", counter),
		cf("SuperCounter1", "UTF8Type", func(d *cassandra.CfDef) { super("UTF8Type")(d); counter(d) }),
		cf("ValLong", vecGeneratorComparator, func(d *cassandra.CfDef) { d.DefaultValidationClass = vecPtr("LongType") }),
		cf("KeyLong", vecGeneratorComparator, func(d *cassandra.CfDef) { d.KeyValidationClass = vecPtr("LongType") }),
		cf("KeyUtf8", vecGeneratorComparator, func(d *cassandra.CfDef) { d.KeyValidationClass = vecPtr("UTF8Type") }),
		cf("ColMeta", vecGeneratorComparator, func(d *cassandra.CfDef) {
			d.ColumnMetadata = []*cassandra.ColumnDef{
				{Name: []byte("age"), ValidationClass: "Int32Type"},
				{Name: []byte("id"), ValidationClass: "UUIDType"},
			}
		}),
		cf("DefTtl", vecGeneratorComparator, func(d *cassandra.CfDef) { d.DefaultTimeToLive = vecPtr(int32(630720000)) }),
	}
}

// runValidationVectors sends every request of validation_errors.json to
// one server, in file order (later cases read what earlier ones wrote).
func runValidationVectors(t *testing.T, target Target, dir string) {
	var file vecValidationFile
	vecLoad(t, dir, "validation_errors.json", &file)
	if len(file.Cases) == 0 {
		t.Fatal("validation_errors.json has no cases")
	}
	e := NewEnv(t, target, Options{ClusterName: "vectors"})
	vecCreateKeyspace(t, e.C, file.Keyspace)
	defs := vecValidationFamilies()
	// One family per comparator: the invalid_name:<comparator> cases name
	// it in their column parent.
	seen := map[string]bool{}
	for _, c := range file.Cases {
		comparator, ok := strings.CutPrefix(c.Category, "invalid_name:")
		if !ok {
			continue
		}
		var r vecValidationRequest
		if err := json.Unmarshal(c.Request, &r); err != nil || r.ColumnParent == nil {
			t.Fatalf("case %q: no column parent in %s (%v)", c.Description, c.Request, err)
		}
		if name := r.ColumnParent.ColumnFamily; !seen[name] {
			seen[name] = true
			d := cassandra.NewCfDef()
			d.Name, d.ComparatorType = name, comparator
			defs = append(defs, d)
		}
	}
	for _, d := range defs {
		d.Keyspace = file.Keyspace
		if _, err := e.C.SystemAddColumnFamily(Ctx(t), d); err != nil {
			t.Fatalf("system_add_column_family %s: %v", d.Name, err)
		}
	}
	if e.Target.Cassandra {
		// The CQL 3 table the schema cases reach through Thrift (divergence
		// cql3-tables: thriftd has none, so there they skip).
		create := []byte("CREATE TABLE " + vecCQL3Family + " (k int PRIMARY KEY, v int)")
		if _, err := e.C.ExecuteCql3Query(Ctx(t), create, cassandra.Compression_NONE, vecCL); err != nil {
			t.Fatalf("create the CQL 3 table %s: %v", vecCQL3Family, err)
		}
	}
	v := &vecValidator{env: e, keyspace: file.Keyspace}
	for i, c := range file.Cases {
		t.Run(fmt.Sprintf("%03d_%s_%s", i, c.Method, c.Description), func(t *testing.T) {
			v.run(t, c)
		})
	}
}

// vecValidator replays validation cases on one server.
type vecValidator struct {
	env      *Env
	keyspace string
}

func (v *vecValidator) run(t *testing.T, c vecValidationCase) {
	var r vecValidationRequest
	if err := json.Unmarshal(c.Request, &r); err != nil {
		t.Fatalf("decode request %s: %v", c.Request, err)
	}
	family := r.family(c)
	if family == vecCQL3Family && !v.env.Target.Cassandra {
		// thriftd has no CQL3 tables, so there is nothing to reach through
		// Thrift: the case cannot be replayed.
		t.Skipf("!!! SKIPPED %q (%s): needs the CQL3 table %s accessed through Thrift; thriftd has no CQL3 tables !!!", c.Description, c.Method, vecCQL3Family)
	}
	client := v.env.C
	if c.Category == "session" {
		// The session cases run on a fresh connection, one that has not
		// set a keyspace.
		client = v.env.Dial()
	}

	if c.Exception == "TApplicationException" {
		// A request missing a required argument cannot be sent through the
		// generated client; it is written by hand. 3.11's message names
		// Java classes and ends with a JVM identity hash, which no client
		// can match on: thriftd answers the same exception type (a protocol
		// error) with its own message naming the missing field, and keeps
		// the connection open.
		v.checkMissingTimestamp(t, c, r)
		return
	}

	if v.env.Target.Cassandra {
		v.runOnCassandra(t, client, c, r, family)
		return
	}

	if ttl, ok := vecRequestTTL(c, r); ok && v.env.Target.Backend != nil && v.env.Diverges("ttl-2038") {
		v.checkTTLCap(t, client, c, r, family, ttl)
		return
	}

	got, err := v.call(t, client, c, r, family)

	switch {
	case c.Exception == "InvalidRequestException" && strings.Contains(c.Why, "CASSANDRA-14092"):
		// No 2038 TTL cap: thriftd stores expiry as an unsigned 32-bit
		// second count (good until 2106), so a TTL that 3.11 refused only
		// because the expiry passes 2038-01-19 is accepted; the "ttl is too
		// large" limit (630720000 s) still applies.
		t.Logf("divergence: 3.11.9 refused this TTL only for CASSANDRA-14092; thriftd accepts it")
		vecCheckOutcome(t, c.Method+" (no 2038 TTL cap on thriftd)", err, "", "")
		return
	case vecBreaksCassandra(t, c, r):
		// 3.11.9 crashed, timed out, dropped the connection or accepted a
		// name that later poisoned the node. thriftd refuses the request
		// cleanly and stays healthy.
		t.Logf("divergence: 3.11.9 %s; thriftd answered %s %q", vecCassandraFailure(c), vecOrSuccess(vecExceptionName(err)), vecWhy(err))
		if name := vecExceptionName(err); name != "InvalidRequestException" || vecWhy(err) == "" {
			t.Errorf("%s: want InvalidRequestException with a reason (3.11.9: %s), got %s %v", c.Method, vecCassandraFailure(c), vecOrSuccess(name), err)
		}
		v.checkHealthy(t, client, family)
		return
	case c.Result == "accepted":
		vecCheckOutcome(t, c.Method, err, "", "")
	case c.Result == "error":
		vecCheckOutcome(t, c.Method, err, c.Exception, c.Why)
		return
	default:
		t.Fatalf("unknown result %q", c.Result)
	}
	if err == nil && len(c.Returned) > 0 {
		vecSameJSON(t, v.env.Target, c.Method+" returned", got, c.Returned)
	}
}

// checkTTLCap replays a case that writes with a TTL where the 2038 cap
// applies (divergence ttl-2038: on Cassandra, and on a CQL cluster that
// enforces it): its fate depends on today's clock.
func (v *vecValidator) checkTTLCap(t *testing.T, client *Client, c vecValidationCase, r vecValidationRequest, family string, ttl int32) {
	_, err := v.call(t, client, c, r, family)
	if time.Now().Unix()+int64(ttl) > math.MaxInt32 {
		if vecExceptionName(err) != "InvalidRequestException" || !strings.Contains(vecWhy(err), "CASSANDRA-14092") {
			t.Errorf("%s: got %s %q, want the CASSANDRA-14092 refusal", c.Method, vecOrSuccess(vecExceptionName(err)), vecWhy(err))
		}
	} else {
		vecCheckOutcome(t, c.Method+" (expiry before 2038)", err, "", "")
	}
}

// runOnCassandra replays a case on a real Cassandra node, where the recorded
// answer is the one to give, except that a TTL's fate under the 2038 cap
// depends on today's clock, and that the requests which poisoned 3.11.9 are
// not sent at all.
func (v *vecValidator) runOnCassandra(t *testing.T, client *Client, c vecValidationCase, r vecValidationRequest, family string) {
	if c.Category == "invalid_name:DecimalType" && vecBreaksCassandra(t, c, r) {
		t.Skipf("!!! SKIPPED on Cassandra: %q poisons the node: its flush fails and the family cannot be dropped and created again until a restart !!!", c.Description)
	}
	if vecFixedAfter3119[c.Description] {
		// 3.11.9 crashed on these; later 3.11 releases store them.
		vecCheckOutcome(t, c.Method+" (accepted since 3.11.9)", v.callOnly(t, client, c, r, family), "", "")
		return
	}
	if ttl, ok := vecRequestTTL(c, r); ok && v.env.Diverges("ttl-2038") {
		v.checkTTLCap(t, client, c, r, family, ttl)
		return
	}
	got, err := v.call(t, client, c, r, family)
	switch {
	case c.Exception == "TTransportException":
		if err == nil || !isTransportError(err) {
			t.Errorf("%s: err = %v, want the connection dropped as recorded (%s)", c.Method, err, c.Note)
		}
		// Go on over a new connection.
		v.env.C = v.env.Dial()
		if err := v.env.C.SetKeyspace(Ctx(t), v.keyspace); err != nil {
			t.Fatalf("set_keyspace %s after a dropped connection: %v", v.keyspace, err)
		}
	case c.Result == "accepted":
		vecCheckOutcome(t, c.Method, err, "", "")
		if err == nil && len(c.Returned) > 0 {
			vecSameJSON(t, v.env.Target, c.Method+" returned", got, c.Returned)
		}
	case c.Result == "error" && c.Exception == "TimedOutException":
		vecCheckOutcome(t, c.Method, err, c.Exception, "")
	case c.Result == "error":
		vecCheckOutcome(t, c.Method, err, c.Exception, c.Why)
	default:
		t.Fatalf("unknown result %q", c.Result)
	}
}

// vecFixedAfter3119 are the cases 3.11.9 crashed on and the 3.11 release the
// tests start (3.11.19) accepts.
var vecFixedAfter3119 = map[string]bool{"static-marker prefix 0xffff": true}

func (v *vecValidator) callOnly(t *testing.T, client *Client, c vecValidationCase, r vecValidationRequest, family string) error {
	_, err := v.call(t, client, c, r, family)
	return err
}

// vecRequestTTL is the TTL a write case asks for, its own or its family's
// default, when the 2038 cap can concern it (above ten years).
func vecRequestTTL(c vecValidationCase, r vecValidationRequest) (int32, bool) {
	const tenYears = 10 * 365 * 24 * 3600
	if c.Method != "insert" || r.Column == nil {
		return 0, false
	}
	ttl := int32(0)
	if r.Column.TTL != nil {
		ttl = *r.Column.TTL
	} else if r.ColumnParent != nil && r.ColumnParent.ColumnFamily == "DefTtl" {
		ttl = 630720000
	}
	// Above 20 years the "ttl is too large" refusal comes first.
	return ttl, ttl > tenYears && ttl <= 630720000
}

// vecBreaksCassandra reports the cases that broke 3.11.9 instead of being
// answered: they carry a note and a failure other than an
// InvalidRequestException, or are the 4-byte DecimalType name, which 3.11.9
// accepted although it poisons the node (the file's notes tell).
func vecBreaksCassandra(t testing.TB, c vecValidationCase, r vecValidationRequest) bool {
	if c.Exception != "" && c.Exception != "InvalidRequestException" && (c.Note != "" || len(c.ServerLogErrors) > 0) {
		return true
	}
	if c.Category == "invalid_name:DecimalType" && r.Column != nil && r.Column.NameHex != nil {
		return len(vecName(t, *r.Column.NameHex)) == 4
	}
	return false
}

func vecCassandraFailure(c vecValidationCase) string {
	if c.Exception == "" {
		return "accepted a name that poisons the node"
	}
	return c.Exception + ": " + c.Note
}

// checkHealthy checks that the connection still answers after a refused
// request: a slice of the family the request used.
func (v *vecValidator) checkHealthy(t *testing.T, c *Client, family string) {
	t.Helper()
	parent := &cassandra.ColumnParent{ColumnFamily: family}
	if _, err := c.GetSlice(Ctx(t), []byte("k"), parent, vecFullRange(vecDefaultSliceCount, false), vecCL); err != nil {
		t.Errorf("follow-up get_slice on %s: the server is not healthy: %v", family, err)
	}
}

// family is the column family a request addresses.
func (r *vecValidationRequest) family(c vecValidationCase) string {
	switch {
	case r.ColumnFamily != "":
		return r.ColumnFamily
	case r.ColumnParent != nil:
		return r.ColumnParent.ColumnFamily
	case r.ColumnPath != nil:
		return r.ColumnPath.ColumnFamily
	case r.Path != nil:
		return r.Path.ColumnFamily
	}
	if f, ok := vecFamilyFromDescription[c.Description]; ok {
		return f
	}
	return vecDefaultFamily
}

func (r *vecValidationRequest) key(t testing.TB) []byte {
	if r.KeyHex != nil {
		return vecKey(t, *r.KeyHex)
	}
	if r.ColumnParent != nil && r.ColumnParent.ColumnFamily == vecCQL3Family {
		// The CQL 3 table's key is an int: the recording read the row its
		// insert case wrote, key 1.
		return []byte{0, 0, 0, 1}
	}
	return vecKey(t, vecDefaultKey)
}

func (r *vecValidationRequest) parent(t testing.TB, family string) *cassandra.ColumnParent {
	if r.ColumnParent != nil {
		return r.ColumnParent.parent(t)
	}
	return &cassandra.ColumnParent{ColumnFamily: family}
}

func (r *vecValidationRequest) consistency(t testing.TB) cassandra.ConsistencyLevel {
	if r.ConsistencyLevel == "" {
		return vecCL
	}
	cl, err := cassandra.ConsistencyLevelFromString(r.ConsistencyLevel)
	if err != nil {
		t.Fatalf("consistency level %q: %v", r.ConsistencyLevel, err)
	}
	return cl
}

func vecDefaultColumn() *cassandra.Column {
	return &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: vecPtr(int64(1000))}
}

// readPredicate is the predicate of a read: the recorded one, a slice
// range, or the whole row.
func (r *vecValidationRequest) readPredicate(t testing.TB) *cassandra.SlicePredicate {
	switch {
	case len(r.Predicate) > 0:
		var word string
		if json.Unmarshal(r.Predicate, &word) == nil {
			if word != "both" {
				t.Fatalf("predicate %q not replayed", word)
			}
			p := vecFullRange(vecDefaultSliceCount, false)
			p.ColumnNames = [][]byte{[]byte("c")}
			return p
		}
		var p vecPredicate
		if err := json.Unmarshal(r.Predicate, &p); err != nil {
			t.Fatalf("predicate %s: %v", r.Predicate, err)
		}
		return p.predicate(t)
	case r.SliceRange != nil:
		return &cassandra.SlicePredicate{SliceRange: r.SliceRange.sliceRange(t)}
	}
	return vecFullRange(vecDefaultSliceCount, false)
}

// mutations is the mutation map of a batch_mutate case.
func (r *vecValidationRequest) mutations(t testing.TB, family string) map[string]map[string][]*cassandra.Mutation {
	if r.MutationMap != nil {
		out := map[string]map[string][]*cassandra.Mutation{}
		for k, byCF := range r.MutationMap {
			out[string(vecKey(t, k))] = map[string][]*cassandra.Mutation{}
			for cf, ms := range byCF {
				if len(ms) > 0 {
					t.Fatalf("mutation_map with mutations not replayed: %v", ms)
				}
				out[string(vecKey(t, k))][cf] = []*cassandra.Mutation{}
			}
		}
		return out
	}
	m := &cassandra.Mutation{}
	switch {
	case len(r.Mutation) > 0:
		switch vecShape(t, r.Mutation) {
		case "{}":
		case "both":
			m.ColumnOrSupercolumn = &cassandra.ColumnOrSuperColumn{Column: vecDefaultColumn()}
			m.Deletion = &cassandra.Deletion{Timestamp: vecPtr(int64(1000))}
		default:
			t.Fatalf("mutation %s not replayed", r.Mutation)
		}
	case len(r.Cosc) > 0:
		m.ColumnOrSupercolumn = &cassandra.ColumnOrSuperColumn{}
		switch vecShape(t, r.Cosc) {
		case "{}":
		case "column+super_column":
			m.ColumnOrSupercolumn.Column = vecDefaultColumn()
			m.ColumnOrSupercolumn.SuperColumn = &cassandra.SuperColumn{Name: []byte("sc"), Columns: []*cassandra.Column{vecDefaultColumn()}}
		default:
			t.Fatalf("cosc %s not replayed", r.Cosc)
		}
	case r.Deletion != nil:
		m.Deletion = r.Deletion.deletion(t)
	case r.SuperColumn != nil:
		sc := &cassandra.SuperColumn{Name: vecName(t, r.SuperColumn.NameHex), Columns: []*cassandra.Column{}}
		for _, col := range r.SuperColumn.Columns {
			sc.Columns = append(sc.Columns, col.column(t))
		}
		m.ColumnOrSupercolumn = &cassandra.ColumnOrSuperColumn{SuperColumn: sc}
	case r.CounterColumn != nil:
		m.ColumnOrSupercolumn = &cassandra.ColumnOrSuperColumn{CounterColumn: r.CounterColumn.counterColumn(t)}
	case r.Column != nil:
		col := r.Column.column(t)
		if super := r.parent(t, family).SuperColumn; super != nil {
			m.ColumnOrSupercolumn = &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: super, Columns: []*cassandra.Column{col}}}
		} else {
			m.ColumnOrSupercolumn = &cassandra.ColumnOrSuperColumn{Column: col}
		}
	default:
		t.Fatalf("batch_mutate request %+v not replayed", r)
	}
	return map[string]map[string][]*cassandra.Mutation{string(r.key(t)): {family: {m}}}
}

// vecShape is "{}" for an empty object, the word for a string.
func vecShape(t testing.TB, raw json.RawMessage) string {
	var word string
	if json.Unmarshal(raw, &word) == nil {
		return word
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("shape %s: %v", raw, err)
	}
	if len(obj) == 0 {
		return "{}"
	}
	return string(raw)
}

func (c vecCol) counterColumn(t testing.TB) *cassandra.CounterColumn {
	cc := &cassandra.CounterColumn{Name: []byte("c"), Value: 1}
	if c.NameHex != nil {
		cc.Name = vecName(t, *c.NameHex)
	}
	if c.Value != nil {
		cc.Value = *c.Value
	}
	return cc
}

// call sends a case's request and returns what a read answered, in the
// vectors' JSON shape.
func (v *vecValidator) call(t *testing.T, c *Client, vc vecValidationCase, r vecValidationRequest, family string) (any, error) {
	key := r.key(t)
	cl := r.consistency(t)
	switch vc.Method {
	case "insert":
		col := vecDefaultColumn()
		if r.Column != nil {
			col = r.Column.column(t)
		}
		return nil, c.Insert(Ctx(t), key, r.parent(t, family), col, cl)
	case "batch_mutate":
		return nil, c.BatchMutate(Ctx(t), r.mutations(t, family), cl)
	case "get":
		cosc, err := c.Get(Ctx(t), key, r.ColumnPath.path(t), cl)
		return vecCoscJSON(cosc), err
	case "get_slice":
		cols, err := c.GetSlice(Ctx(t), key, r.parent(t, family), r.readPredicate(t), cl)
		return vecCoscsJSON(cols), err
	case "get_count":
		return c.GetCount(Ctx(t), key, r.parent(t, family), r.readPredicate(t), cl)
	case "multiget_slice":
		_, err := c.MultigetSlice(Ctx(t), vecKeys(t, r.KeysHex), r.parent(t, family), r.readPredicate(t), cl)
		return nil, err
	case "get_range_slices":
		rows, err := c.GetRangeSlices(Ctx(t), r.parent(t, family), r.readPredicate(t), r.Range.keyRange(t), cl)
		return vecKeySlicesJSON(rows), err
	case "get_indexed_slices":
		clause := &cassandra.IndexClause{StartKey: []byte{}, Count: vecDefaultSliceCount}
		for _, x := range r.IndexClause.Expressions {
			op, err := cassandra.IndexOperatorFromString(x.Op)
			if err != nil {
				t.Fatalf("index operator %q: %v", x.Op, err)
			}
			clause.Expressions = append(clause.Expressions, &cassandra.IndexExpression{ColumnName: vecName(t, x.ColumnNameHex), Op: op, Value: vecName(t, x.ValueHex)})
		}
		rows, err := c.GetIndexedSlices(Ctx(t), r.parent(t, family), clause, r.readPredicate(t), cl)
		return vecKeySlicesJSON(rows), err
	case "remove":
		ts := int64(1000)
		if r.Timestamp != nil {
			ts = *r.Timestamp
		}
		return nil, c.Remove(Ctx(t), key, r.ColumnPath.path(t), ts, cl)
	case "add":
		cc := &cassandra.CounterColumn{Name: []byte("c"), Value: 1}
		if r.Column != nil {
			cc = r.Column.counterColumn(t)
		}
		return nil, c.Add(Ctx(t), key, r.parent(t, family), cc, cl)
	case "remove_counter":
		return nil, c.RemoveCounter(Ctx(t), key, r.Path.path(t), cl)
	case "system_add_column_family":
		cf := cassandra.NewCfDef()
		cf.Keyspace, cf.Name, cf.ComparatorType = v.keyspace, r.Name, vecGeneratorComparator
		if r.Keyspace != nil {
			cf.Keyspace = *r.Keyspace
		}
		if r.ColumnType != nil {
			cf.ColumnType = *r.ColumnType
		}
		if r.ComparatorType != nil {
			cf.ComparatorType = *r.ComparatorType
		}
		if _, err := c.SystemAddColumnFamily(Ctx(t), cf); err != nil {
			return nil, err
		}
		// What the family is described back as: [[comparator, subcomparator]].
		d := vecDescribedFamily(t, c, cf.Keyspace, cf.Name)
		return []any{[]any{d.ComparatorType, vecStringOrUnset(d.SubcomparatorType)}}, nil
	case "system_add_keyspace":
		ks := &cassandra.KsDef{
			Name:            r.Name,
			StrategyClass:   "org.apache.cassandra.locator.SimpleStrategy",
			StrategyOptions: map[string]string{"replication_factor": "1"},
			CfDefs:          []*cassandra.CfDef{},
		}
		_, err := c.SystemAddKeyspace(Ctx(t), ks)
		return nil, err
	case "set_keyspace":
		return nil, c.SetKeyspace(Ctx(t), *r.Keyspace)
	case "describe_keyspace":
		_, err := c.DescribeKeyspace(Ctx(t), *r.Keyspace)
		return nil, err
	case "truncate":
		return nil, c.Truncate(Ctx(t), r.Cfname)
	}
	t.Fatalf("method %s not replayed", vc.Method)
	return nil, nil
}

// checkMissingTimestamp sends remove() without its required timestamp,
// written field by field, and expects a TApplicationException of the
// recorded type; the connection must then still answer.
func (v *vecValidator) checkMissingTimestamp(t *testing.T, c vecValidationCase, r vecValidationRequest) {
	if c.Method != "remove" || r.Timestamp != nil || c.Type == nil {
		t.Fatalf("TApplicationException case %q not replayed", c.Description)
	}
	client := v.env.Dial()
	if err := client.SetKeyspace(Ctx(t), v.keyspace); err != nil {
		t.Fatalf("set_keyspace: %v", err)
	}
	ctx := Ctx(t)
	proto := thrift.NewTBinaryProtocolConf(client.transport, &thrift.TConfiguration{})
	const seqID = 1 << 30
	write := func() error {
		if err := proto.WriteMessageBegin(ctx, "remove", thrift.CALL, seqID); err != nil {
			return err
		}
		if err := proto.WriteStructBegin(ctx, "remove_args"); err != nil {
			return err
		}
		if err := proto.WriteFieldBegin(ctx, "key", thrift.STRING, 1); err != nil {
			return err
		}
		if err := proto.WriteBinary(ctx, r.key(t)); err != nil {
			return err
		}
		if err := proto.WriteFieldEnd(ctx); err != nil {
			return err
		}
		if err := proto.WriteFieldBegin(ctx, "column_path", thrift.STRUCT, 2); err != nil {
			return err
		}
		if err := r.ColumnPath.path(t).Write(ctx, proto); err != nil {
			return err
		}
		if err := proto.WriteFieldEnd(ctx); err != nil {
			return err
		}
		if err := proto.WriteFieldBegin(ctx, "consistency_level", thrift.I32, 4); err != nil {
			return err
		}
		if err := proto.WriteI32(ctx, int32(vecCL)); err != nil {
			return err
		}
		if err := proto.WriteFieldEnd(ctx); err != nil {
			return err
		}
		if err := proto.WriteFieldStop(ctx); err != nil {
			return err
		}
		if err := proto.WriteStructEnd(ctx); err != nil {
			return err
		}
		if err := proto.WriteMessageEnd(ctx); err != nil {
			return err
		}
		return proto.Flush(ctx)
	}
	if err := write(); err != nil {
		t.Fatalf("send remove without timestamp: %v", err)
	}
	name, typ, seq, err := proto.ReadMessageBegin(ctx)
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	if name != "remove" || typ != thrift.EXCEPTION || seq != seqID {
		t.Fatalf("reply %s type %d seq %d, want remove EXCEPTION %d", name, typ, seq, seqID)
	}
	exc := thrift.NewTApplicationException(thrift.UNKNOWN_APPLICATION_EXCEPTION, "")
	if err := exc.Read(ctx, proto); err != nil {
		t.Fatalf("read TApplicationException: %v", err)
	}
	if err := proto.ReadMessageEnd(ctx); err != nil {
		t.Fatalf("read reply end: %v", err)
	}
	if exc.TypeId() != *c.Type {
		t.Errorf("TApplicationException type %d, want %d (3.11.9: %q)", exc.TypeId(), *c.Type, c.MessageNormalized)
	}
	if !strings.Contains(strings.ToLower(exc.Error()), "timestamp") {
		t.Errorf("TApplicationException message %q does not name the missing timestamp (3.11.9: %q)", exc.Error(), c.MessageNormalized)
	}
	v.checkHealthy(t, client, r.family(c))
}
