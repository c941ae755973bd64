package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// one is the consistency level the API tests use unless they test levels.
const one = cassandra.ConsistencyLevel_ONE

// marshalPrefix is the package of Cassandra's marshal types, as
// describe_keyspace names them.
const marshalPrefix = "org.apache.cassandra.db.marshal."

// apiEnv is one API test's server, client and keyspace.
type apiEnv struct {
	*Env
	t  *testing.T
	ks string
}

// newAPIEnv starts a fresh server for one test.
func newAPIEnv(t *testing.T, target Target, opts Options) *apiEnv {
	t.Helper()
	return &apiEnv{Env: NewEnv(t, target, opts), t: t}
}

// newKeyspaceEnv starts a fresh server with keyspace ks holding cfs, set
// as the session keyspace.
func newKeyspaceEnv(t *testing.T, target Target, opts Options, ks string, cfs ...*cassandra.CfDef) *apiEnv {
	t.Helper()
	a := newAPIEnv(t, target, opts)
	a.createKeyspace(ks, cfs...)
	return a
}

// ksDef is a SimpleStrategy RF 1 keyspace definition whose families are
// moved into it.
func ksDef(name string, cfs ...*cassandra.CfDef) *cassandra.KsDef {
	for _, cf := range cfs {
		cf.Keyspace = name
	}
	if cfs == nil {
		cfs = []*cassandra.CfDef{}
	}
	return &cassandra.KsDef{
		Name:            name,
		StrategyClass:   "org.apache.cassandra.locator.SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"},
		CfDefs:          cfs,
		DurableWrites:   true,
	}
}

// createKeyspace adds keyspace name with cfs and sets it on the session.
func (a *apiEnv) createKeyspace(name string, cfs ...*cassandra.CfDef) {
	a.t.Helper()
	if _, err := a.C.SystemAddKeyspace(Ctx(a.t), ksDef(name, cfs...)); err != nil {
		a.t.Fatalf("system_add_keyspace %s: %v", name, err)
	}
	a.use(name)
}

// use sets the session keyspace.
func (a *apiEnv) use(name string) {
	a.t.Helper()
	if err := a.C.SetKeyspace(Ctx(a.t), name); err != nil {
		a.t.Fatalf("set_keyspace %s: %v", name, err)
	}
	a.ks = name
}

// addCF adds a family to the session keyspace.
func (a *apiEnv) addCF(cf *cassandra.CfDef) {
	a.t.Helper()
	cf.Keyspace = a.ks
	if _, err := a.C.SystemAddColumnFamily(Ctx(a.t), cf); err != nil {
		a.t.Fatalf("system_add_column_family %s: %v", cf.Name, err)
	}
}

// describeCF finds a family in describe_keyspace's answer.
func (a *apiEnv) describeCF(ks, cf string) *cassandra.CfDef {
	a.t.Helper()
	def, err := a.C.DescribeKeyspace(Ctx(a.t), ks)
	if err != nil {
		a.t.Fatalf("describe_keyspace %s: %v", ks, err)
	}
	for _, c := range def.CfDefs {
		if c.Name == cf {
			return c
		}
	}
	a.t.Fatalf("describe_keyspace %s: no family %s", ks, cf)
	return nil
}

// cfOption sets one option of a CfDef.
type cfOption func(*cassandra.CfDef)

// standardCF is a Standard family definition (BytesType everywhere unless
// options say otherwise).
func standardCF(name string, opts ...cfOption) *cassandra.CfDef {
	cf := cassandra.NewCfDef()
	cf.Name = name
	for _, o := range opts {
		o(cf)
	}
	return cf
}

// superCF is a Super family definition.
func superCF(name string, opts ...cfOption) *cassandra.CfDef {
	return standardCF(name, append([]cfOption{func(cf *cassandra.CfDef) { cf.ColumnType = "Super" }}, opts...)...)
}

func comparator(t string) cfOption { return func(cf *cassandra.CfDef) { cf.ComparatorType = t } }

func subcomparator(t string) cfOption {
	return func(cf *cassandra.CfDef) { cf.SubcomparatorType = &t }
}

func defaultValidation(t string) cfOption {
	return func(cf *cassandra.CfDef) { cf.DefaultValidationClass = &t }
}

func keyValidation(t string) cfOption {
	return func(cf *cassandra.CfDef) { cf.KeyValidationClass = &t }
}

func defaultTTL(seconds int32) cfOption {
	return func(cf *cassandra.CfDef) { cf.DefaultTimeToLive = &seconds }
}

// counterCF makes the family a counter family.
func counterCF() cfOption { return defaultValidation("CounterColumnType") }

// columnDef declares a column with a validator.
func columnDef(name []byte, validator string) cfOption {
	return func(cf *cassandra.CfDef) {
		cf.ColumnMetadata = append(cf.ColumnMetadata, &cassandra.ColumnDef{Name: name, ValidationClass: validator})
	}
}

// indexedColumn declares a column with a KEYS index; an empty indexName
// lets the server name it.
func indexedColumn(name []byte, validator, indexName string) cfOption {
	return func(cf *cassandra.CfDef) {
		it := cassandra.IndexType_KEYS
		cd := &cassandra.ColumnDef{Name: name, ValidationClass: validator, IndexType: &it}
		if indexName != "" {
			cd.IndexName = &indexName
		}
		cf.ColumnMetadata = append(cf.ColumnMetadata, cd)
	}
}

// col is a column without TTL.
func col(name, value []byte, ts int64) *cassandra.Column {
	return &cassandra.Column{Name: name, Value: value, Timestamp: &ts}
}

// colTTL is a column with a TTL.
func colTTL(name, value []byte, ts int64, ttl int32) *cassandra.Column {
	c := col(name, value, ts)
	c.TTL = &ttl
	return c
}

func b(s string) []byte { return []byte(s) }

// i64 is a LongType value.
func i64(n int64) []byte {
	out := make([]byte, 8)
	binary.BigEndian.PutUint64(out, uint64(n))
	return out
}

func parent(cf string) *cassandra.ColumnParent { return &cassandra.ColumnParent{ColumnFamily: cf} }

func superParent(cf string, super []byte) *cassandra.ColumnParent {
	return &cassandra.ColumnParent{ColumnFamily: cf, SuperColumn: super}
}

func colPath(cf string, name []byte) *cassandra.ColumnPath {
	return &cassandra.ColumnPath{ColumnFamily: cf, Column: name}
}

func superPath(cf string, super, name []byte) *cassandra.ColumnPath {
	return &cassandra.ColumnPath{ColumnFamily: cf, SuperColumn: super, Column: name}
}

// byNames is a names predicate.
func byNames(names ...[]byte) *cassandra.SlicePredicate {
	return &cassandra.SlicePredicate{ColumnNames: names}
}

// byRange is a slice range predicate.
func byRange(start, finish []byte, reversed bool, count int32) *cassandra.SlicePredicate {
	if start == nil {
		start = []byte{}
	}
	if finish == nil {
		finish = []byte{}
	}
	return &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: start, Finish: finish, Reversed: reversed, Count: count}}
}

// everything selects a whole row (or super column).
func everything() *cassandra.SlicePredicate { return byRange(nil, nil, false, 10000) }

// keysRange is a KeyRange between two keys.
func keysRange(start, end []byte, count int32) *cassandra.KeyRange {
	if start == nil {
		start = []byte{}
	}
	if end == nil {
		end = []byte{}
	}
	return &cassandra.KeyRange{StartKey: start, EndKey: end, Count: count}
}

// tokensRange is a KeyRange between two tokens.
func tokensRange(start, end string, count int32) *cassandra.KeyRange {
	return &cassandra.KeyRange{StartToken: &start, EndToken: &end, Count: count}
}

func insertMutation(c *cassandra.Column) *cassandra.Mutation {
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: c}}
}

func superMutation(name []byte, cols ...*cassandra.Column) *cassandra.Mutation {
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: name, Columns: cols}}}
}

func counterMutation(name []byte, delta int64) *cassandra.Mutation {
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{CounterColumn: &cassandra.CounterColumn{Name: name, Value: delta}}}
}

// deletion builds a Deletion mutation; ts nil leaves the timestamp unset
// (counter families).
func deletion(ts *int64, super []byte, p *cassandra.SlicePredicate) *cassandra.Mutation {
	return &cassandra.Mutation{Deletion: &cassandra.Deletion{Timestamp: ts, SuperColumn: super, Predicate: p}}
}

func ts(v int64) *int64 { return &v }

// mutationMap is batch_mutate's argument for one family.
func mutationMap(cf string, rows map[string][]*cassandra.Mutation) map[string]map[string][]*cassandra.Mutation {
	out := map[string]map[string][]*cassandra.Mutation{}
	for k, ms := range rows {
		out[k] = map[string][]*cassandra.Mutation{cf: ms}
	}
	return out
}

// insert writes one column.
func (a *apiEnv) insert(key string, p *cassandra.ColumnParent, c *cassandra.Column) {
	a.t.Helper()
	if err := a.C.Insert(Ctx(a.t), b(key), p, c, one); err != nil {
		a.t.Fatalf("insert %q %s/%x: %v", key, p.ColumnFamily, c.Name, err)
	}
}

// batch applies batch_mutate and fails the test on error.
func (a *apiEnv) batch(m map[string]map[string][]*cassandra.Mutation) {
	a.t.Helper()
	if err := a.C.BatchMutate(Ctx(a.t), m, one); err != nil {
		a.t.Fatalf("batch_mutate: %v", err)
	}
}

// remove deletes a path at ts.
func (a *apiEnv) remove(key string, p *cassandra.ColumnPath, at int64) {
	a.t.Helper()
	if err := a.C.Remove(Ctx(a.t), b(key), p, at, one); err != nil {
		a.t.Fatalf("remove %q %+v: %v", key, p, err)
	}
}

// slice is get_slice that fails the test on error.
func (a *apiEnv) slice(key string, p *cassandra.ColumnParent, pred *cassandra.SlicePredicate) []*cassandra.ColumnOrSuperColumn {
	a.t.Helper()
	out, err := a.C.GetSlice(Ctx(a.t), b(key), p, pred, one)
	if err != nil {
		a.t.Fatalf("get_slice %q %+v: %v", key, p, err)
	}
	return out
}

// count is get_count that fails the test on error.
func (a *apiEnv) count(key string, p *cassandra.ColumnParent, pred *cassandra.SlicePredicate) int32 {
	a.t.Helper()
	n, err := a.C.GetCount(Ctx(a.t), b(key), p, pred, one)
	if err != nil {
		a.t.Fatalf("get_count %q %+v: %v", key, p, err)
	}
	return n
}

// get is get; found is false on NotFoundException.
func (a *apiEnv) get(key string, p *cassandra.ColumnPath) (*cassandra.ColumnOrSuperColumn, bool) {
	a.t.Helper()
	c, err := a.C.Get(Ctx(a.t), b(key), p, one)
	var nf *cassandra.NotFoundException
	if errors.As(err, &nf) {
		return nil, false
	}
	if err != nil {
		a.t.Fatalf("get %q %+v: %v", key, p, err)
	}
	return c, true
}

// mustGet is get of a path that must exist.
func (a *apiEnv) mustGet(key string, p *cassandra.ColumnPath) *cassandra.ColumnOrSuperColumn {
	a.t.Helper()
	c, ok := a.get(key, p)
	if !ok {
		a.t.Fatalf("get %q %s/%q/%q: NotFoundException, want a value", key, p.ColumnFamily, p.SuperColumn, p.Column)
	}
	return c
}

// expectMissing checks that get answers NotFoundException.
func (a *apiEnv) expectMissing(key string, p *cassandra.ColumnPath) {
	a.t.Helper()
	if c, ok := a.get(key, p); ok {
		a.t.Errorf("get %q %s/%q/%q = %s, want NotFoundException", key, p.ColumnFamily, p.SuperColumn, p.Column, describeCosc(c))
	}
}

// rangeSlices is get_range_slices that fails the test on error.
func (a *apiEnv) rangeSlices(p *cassandra.ColumnParent, pred *cassandra.SlicePredicate, r *cassandra.KeyRange) []*cassandra.KeySlice {
	a.t.Helper()
	out, err := a.C.GetRangeSlices(Ctx(a.t), p, pred, r, one)
	if err != nil {
		a.t.Fatalf("get_range_slices %+v: %v", r, err)
	}
	return out
}

// expectIRE checks that err is an InvalidRequestException whose reason
// contains want (any reason when want is empty).
func expectIRE(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ire *cassandra.InvalidRequestException
	if !errors.As(err, &ire) {
		t.Errorf("%s: err = %v (%T), want InvalidRequestException containing %q", what, err, err, want)
		return
	}
	if want != "" && !strings.Contains(ire.Why, want) {
		t.Errorf("%s: why = %q, want it to contain %q", what, ire.Why, want)
	}
}

// expectOK fails the test on err.
func expectOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// cell is a readable (name, value, timestamp, ttl) for comparisons.
type cell struct {
	Name, Value string
	TS          int64
	TTL         int32
}

func (c cell) String() string {
	s := fmt.Sprintf("%q=%q@%d", c.Name, c.Value, c.TS)
	if c.TTL != 0 {
		s += fmt.Sprintf(" ttl %d", c.TTL)
	}
	return s
}

func cellOf(c *cassandra.Column) cell {
	out := cell{Name: string(c.Name), Value: string(c.Value)}
	if c.Timestamp != nil {
		out.TS = *c.Timestamp
	}
	if c.TTL != nil {
		out.TTL = *c.TTL
	}
	return out
}

// cells turns a slice of plain columns into cells; anything else fails.
func cells(t *testing.T, cs []*cassandra.ColumnOrSuperColumn) []cell {
	t.Helper()
	out := []cell{}
	for _, c := range cs {
		if c.Column == nil {
			t.Fatalf("got %s, want a column", describeCosc(c))
		}
		out = append(out, cellOf(c.Column))
	}
	return out
}

// superCell is a readable super column.
type superCell struct {
	Name  string
	Cells []cell
}

// supers turns a super-level slice into super cells.
func supers(t *testing.T, cs []*cassandra.ColumnOrSuperColumn) []superCell {
	t.Helper()
	out := []superCell{}
	for _, c := range cs {
		if c.SuperColumn == nil {
			t.Fatalf("got %s, want a super column", describeCosc(c))
		}
		sc := superCell{Name: string(c.SuperColumn.Name), Cells: []cell{}}
		for _, sub := range c.SuperColumn.Columns {
			sc.Cells = append(sc.Cells, cellOf(sub))
		}
		out = append(out, sc)
	}
	return out
}

// names lists the names of a slice (columns, super columns or counters).
func names(cs []*cassandra.ColumnOrSuperColumn) []string {
	out := []string{}
	for _, c := range cs {
		switch {
		case c.Column != nil:
			out = append(out, string(c.Column.Name))
		case c.SuperColumn != nil:
			out = append(out, string(c.SuperColumn.Name))
		case c.CounterColumn != nil:
			out = append(out, string(c.CounterColumn.Name))
		case c.CounterSuperColumn != nil:
			out = append(out, string(c.CounterSuperColumn.Name))
		}
	}
	return out
}

// keysOf lists the keys of a range answer.
func keysOf(rows []*cassandra.KeySlice) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, string(r.Key))
	}
	return out
}

func describeCosc(c *cassandra.ColumnOrSuperColumn) string {
	switch {
	case c == nil:
		return "<nil>"
	case c.Column != nil:
		return "column " + cellOf(c.Column).String()
	case c.SuperColumn != nil:
		return fmt.Sprintf("super column %q with %d columns", c.SuperColumn.Name, len(c.SuperColumn.Columns))
	case c.CounterColumn != nil:
		return fmt.Sprintf("counter %q=%d", c.CounterColumn.Name, c.CounterColumn.Value)
	case c.CounterSuperColumn != nil:
		return fmt.Sprintf("counter super column %q with %d counters", c.CounterSuperColumn.Name, len(c.CounterSuperColumn.Columns))
	}
	return "empty ColumnOrSuperColumn"
}

// equalCells compares two cell lists and reports a difference.
func equalCells(t *testing.T, what string, got, want []cell) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// equalStrings compares two string lists and reports a difference.
func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: got %q, want %q", what, got, want)
			return
		}
	}
}

// equalBytes compares two byte-string lists.
func equalBytes(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = bytes.Equal(got[i], want[i])
	}
	if !same {
		t.Errorf("%s:\n got  %x\n want %x", what, got, want)
	}
}

// columnNamesOf lists raw column names of a slice.
func columnNamesOf(cs []*cassandra.ColumnOrSuperColumn) [][]byte {
	out := [][]byte{}
	for _, c := range cs {
		switch {
		case c.Column != nil:
			out = append(out, c.Column.Name)
		case c.SuperColumn != nil:
			out = append(out, c.SuperColumn.Name)
		case c.CounterColumn != nil:
			out = append(out, c.CounterColumn.Name)
		case c.CounterSuperColumn != nil:
			out = append(out, c.CounterSuperColumn.Name)
		}
	}
	return out
}

// expectRefused checks a request that Cassandra 3.11 crashes on (divergence
// crash-refused): on Cassandra the connection must have been dropped, and
// the test goes on over a new one with the session keyspace set again; on
// thriftd it must be an InvalidRequestException containing want.
func (a *apiEnv) expectRefused(what string, err error, want string) {
	a.t.Helper()
	if !a.Diverges("crash-refused") {
		expectIRE(a.t, what, err, want)
		return
	}
	if err == nil || !isTransportError(err) {
		a.t.Errorf("%s: err = %v (%T), want the connection dropped as Cassandra 3.11 does", what, err, err)
		return
	}
	a.redial()
}

// redial replaces the test's connection with a new one, with the session
// keyspace set again.
func (a *apiEnv) redial() {
	a.t.Helper()
	a.C = a.Dial()
	if a.ks != "" {
		a.use(a.ks)
	}
}

// isTransportError reports whether err is the loss of the connection rather
// than an answer.
func isTransportError(err error) bool {
	var te thrift.TTransportException
	return errors.As(err, &te)
}
