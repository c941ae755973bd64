package migrate

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// Value is one bound value of a Statement: bytes in the CQL wire form of
// Type. Legacy values already are that form, so they bind unchanged (a
// driver sends Bytes as they are; an empty value is an empty value, never
// null).
type Value struct {
	Type  marshal.Type
	Bytes []byte
}

// Literal renders the value as a CQL literal of its type.
func (v Value) Literal() string { return v.Type.CQLLiteral(v.Bytes) }

// Statement is one CQL statement with its bound values, one per ?
// marker, in order.
type Statement struct {
	CQL    string
	Values []Value
	// Probe, set on counter increments, selects the counter cell that the
	// increment adds to; its values are Values[1:] (the WHERE clause). A
	// resumed run uses it to apply every increment exactly once.
	Probe string
}

// Inline renders the statement as cqlsh runs it: every marker replaced by
// its value's literal, terminated by a semicolon.
func (s Statement) Inline() string { return string(s.AppendInline(nil)) }

// AppendInline appends Inline's text to dst.
func (s Statement) AppendInline(dst []byte) []byte {
	eachSegment(s.CQL, func(i int, text string) {
		if i > 0 {
			if i <= len(s.Values) {
				dst = append(dst, s.Values[i-1].Literal()...)
			} else {
				dst = append(dst, '?')
			}
		}
		dst = append(dst, text...)
	})
	return append(dst, ';')
}

// eachSegment calls visit with the pieces of cql between its ? markers
// (markers inside quotes do not count), in order: piece i follows the
// i-th marker.
func eachSegment(cql string, visit func(i int, text string)) {
	var quote byte
	start, n := 0, 0
	for i := 0; i < len(cql); i++ {
		c := cql[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			visit(n, cql[start:i])
			n++
			start = i + 1
		}
	}
	visit(n, cql[start:])
}

// DefaultReplication is the replication of a keyspace created without
// --replication.
const DefaultReplication = "{'class': 'SimpleStrategy', 'replication_factor': '1'}"

// ParseReplication reads a replication map written loosely, as JSON or as
// a CQL map ({"class": "NetworkTopologyStrategy", "dc1": 3} or
// {'class':'SimpleStrategy','replication_factor':1}), and returns it as a
// CQL map literal. An empty text is DefaultReplication.
func ParseReplication(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return DefaultReplication, nil
	}
	if !strings.HasPrefix(text, "{") || !strings.HasSuffix(text, "}") {
		return "", fmt.Errorf("replication %q: expected a map such as {'class': 'SimpleStrategy', 'replication_factor': 1}", text)
	}
	body := strings.TrimSpace(text[1 : len(text)-1])
	if body == "" {
		return "", fmt.Errorf("replication %q: empty map", text)
	}
	var parts []string
	hasClass := false
	for _, entry := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(entry, ":")
		if !ok {
			return "", fmt.Errorf("replication %q: entry %q is not key: value", text, strings.TrimSpace(entry))
		}
		k, v = unquoteLoose(k), unquoteLoose(v)
		if k == "" || v == "" {
			return "", fmt.Errorf("replication %q: empty key or value in %q", text, strings.TrimSpace(entry))
		}
		if k == "class" {
			hasClass = true
		}
		parts = append(parts, quoteString(k)+": "+quoteString(v))
	}
	if !hasClass {
		return "", fmt.Errorf("replication %q: missing 'class'", text)
	}
	return "{" + strings.Join(parts, ", ") + "}", nil
}

func unquoteLoose(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return s
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Schema is what a sink creates before data arrives: a keyspace and its
// tables.
type Schema struct {
	// Keyspace is the target keyspace (unquoted).
	Keyspace string
	// Replication is a CQL map literal (see ParseReplication).
	Replication string
	Tables      []*supercol.Table
	// SourceKeyspace is the legacy keyspace converted, Mappings the
	// mapping of each family onto its table (in Tables' order), and
	// MetaKeyspace thriftd's metadata keyspace (empty: thriftbridge_meta):
	// what a MetadataSink records.
	SourceKeyspace string
	Mappings       []*supercol.Mapping
	MetaKeyspace   string
}

// Statements returns the DDL: CREATE KEYSPACE, then each table and its
// indexes, all idempotent (IF NOT EXISTS).
func (s *Schema) Statements() []Statement {
	repl := s.Replication
	if repl == "" {
		repl = DefaultReplication
	}
	out := []Statement{{CQL: "CREATE KEYSPACE IF NOT EXISTS " + supercol.QuoteIdent(s.Keyspace) + " WITH replication = " + repl}}
	for _, t := range s.Tables {
		out = append(out, Statement{CQL: ifNotExists(t.CreateTableCQL(), "CREATE TABLE ")})
		for _, ix := range t.CreateIndexCQL() {
			out = append(out, Statement{CQL: ifNotExists(ix, "CREATE INDEX ")})
		}
	}
	return out
}

// ifNotExists makes a CREATE statement idempotent and strips its
// terminator (Inline adds it back).
func ifNotExists(cql, verb string) string {
	cql = strings.TrimRight(strings.TrimSpace(cql), ";")
	cql = strings.TrimSpace(cql)
	if strings.HasPrefix(cql, verb) && !strings.HasPrefix(cql[len(verb):], "IF NOT EXISTS") {
		cql = verb + "IF NOT EXISTS " + cql[len(verb):]
	}
	return cql
}

// TableStatements builds the data statements of one table. Statement texts
// are built once per shape of statement and shared.
type TableStatements struct {
	table  *supercol.Table
	quoted []string
	cache  map[int]statementText
}

type statementText struct{ cql, probe string }

// NewTableStatements prepares the statement builder of table.
func NewTableStatements(table *supercol.Table) *TableStatements {
	ts := &TableStatements{table: table, cache: map[int]statementText{}}
	for _, c := range table.Columns {
		ts.quoted = append(ts.quoted, supercol.QuoteIdent(c.Name))
	}
	return ts
}

// Table is the table the statements write.
func (ts *TableStatements) Table() *supercol.Table { return ts.table }

// insertText is the INSERT of the first keys primary-key columns and
// column, with or without a TTL.
func (ts *TableStatements) insertText(keys, column int, withTTL bool) string {
	id := (keys*len(ts.quoted)+column)*2 + boolInt(withTTL)
	if t, ok := ts.cache[id]; ok {
		return t.cql
	}
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(ts.table.QualifiedName())
	b.WriteString(" (")
	for i := 0; i < keys; i++ {
		b.WriteString(ts.quoted[i])
		b.WriteString(", ")
	}
	b.WriteString(ts.quoted[column])
	b.WriteString(") VALUES (")
	for i := 0; i < keys; i++ {
		b.WriteString("?, ")
	}
	b.WriteString("?) USING ")
	if withTTL {
		b.WriteString("TTL ? AND ")
	}
	b.WriteString("TIMESTAMP ?")
	ts.cache[id] = statementText{cql: b.String()}
	return b.String()
}

// counterText is the UPDATE adding to a counter column, and its probe.
func (ts *TableStatements) counterText(keys, column int) statementText {
	id := -((keys*len(ts.quoted) + column) + 1)
	if t, ok := ts.cache[id]; ok {
		return t
	}
	var where strings.Builder
	for i := 0; i < keys; i++ {
		if i > 0 {
			where.WriteString(" AND ")
		}
		where.WriteString(ts.quoted[i])
		where.WriteString(" = ?")
	}
	col := ts.quoted[column]
	name := ts.table.QualifiedName()
	t := statementText{
		cql:   "UPDATE " + name + " SET " + col + " = " + col + " + ? WHERE " + where.String(),
		probe: "SELECT " + col + " FROM " + name + " WHERE " + where.String(),
	}
	ts.cache[id] = t
	return t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Arena holds the values and encoded numbers of the statements of one
// batch, reused from batch to batch.
type Arena struct {
	values []Value
	bytes  []byte
}

// Reset forgets everything the arena holds; statements built on it are no
// longer valid.
func (a *Arena) Reset() {
	a.values = a.values[:0]
	a.bytes = a.bytes[:0]
}

func (a *Arena) copyBytes(b []byte) []byte {
	start := len(a.bytes)
	a.bytes = append(a.bytes, b...)
	return a.bytes[start:len(a.bytes):len(a.bytes)]
}

func (a *Arena) int32Bytes(v int32) []byte {
	start := len(a.bytes)
	a.bytes = binary.BigEndian.AppendUint32(a.bytes, uint32(v))
	return a.bytes[start:len(a.bytes):len(a.bytes)]
}

func (a *Arena) int64Bytes(v int64) []byte {
	start := len(a.bytes)
	a.bytes = binary.BigEndian.AppendUint64(a.bytes, uint64(v))
	return a.bytes[start:len(a.bytes):len(a.bytes)]
}

// values reserves n values; the returned slice's elements are filled by
// the caller.
func (a *Arena) reserve(n int) []Value {
	start := len(a.values)
	for i := 0; i < n; i++ {
		a.values = append(a.values, Value{})
	}
	return a.values[start:len(a.values):len(a.values)]
}

// Insert builds the INSERT of one cell placed at p: value, writetime in
// microseconds and TTL in seconds (0: none). Bytes are copied into arena.
func (ts *TableStatements) Insert(a *Arena, p *supercol.Placement, value []byte, writetime int64, ttl int32) Statement {
	keys := len(p.Key)
	n := keys + 2
	if ttl > 0 {
		n++
	}
	vals := a.reserve(n)
	cols := ts.table.Columns
	for i, k := range p.Key {
		vals[i] = Value{Type: cols[i].Type, Bytes: a.copyBytes(k)}
	}
	vals[keys] = Value{Type: cols[p.Column].Type, Bytes: a.copyBytes(value)}
	i := keys + 1
	if ttl > 0 {
		vals[i] = Value{Type: marshal.Int32Type{}, Bytes: a.int32Bytes(ttl)}
		i++
	}
	vals[i] = Value{Type: marshal.LongType{}, Bytes: a.int64Bytes(writetime)}
	return Statement{CQL: ts.insertText(keys, p.Column, ttl > 0), Values: vals}
}

// Increment builds the UPDATE adding delta to the counter placed at p.
func (ts *TableStatements) Increment(a *Arena, p *supercol.Placement, delta int64) Statement {
	keys := len(p.Key)
	vals := a.reserve(keys + 1)
	cols := ts.table.Columns
	vals[0] = Value{Type: marshal.CounterColumnType{}, Bytes: a.int64Bytes(delta)}
	for i, k := range p.Key {
		vals[i+1] = Value{Type: cols[i].Type, Bytes: a.copyBytes(k)}
	}
	t := ts.counterText(keys, p.Column)
	return Statement{CQL: t.cql, Values: vals, Probe: t.probe}
}
