package legacy

import (
	"bytes"
	"compress/zlib"
	"context"
	"io"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Over an engine that runs CQL on its cluster (store.CQLRunner), the CQL 3
// calls of the Thrift API pass their statements through to the cluster,
// at the call's consistency level, with the connection's keyspace as the
// default keyspace (a USE statement changes it, as set_keyspace does), and
// answer as Cassandra 3.11 answers them (cqlResultToThrift). Over the embedded
// engine, which keeps Thrift-era column families only and has no CQL
// engine, they refuse with a reason that says where to go instead. CQL 2
// is refused everywhere, as Cassandra 3.x refuses it.

const (
	cql2Refusal = "CQL2 has been removed in Cassandra 3.0 and is not supported by thriftd either; use CQL3, or the Thrift data calls (get_slice, batch_mutate, ...)"
	cql3Refusal = "CQL over Thrift is not supported by thriftd; use the Thrift data calls (get_slice, batch_mutate, ...), or CQL3 through the native protocol of a Cassandra or ScyllaDB cluster"
)

// ExecuteCqlQuery implements execute_cql_query (CQL2).
func (h *Handler) ExecuteCqlQuery(context.Context, []byte, cassandra.Compression) (*cassandra.CqlResult_, error) {
	return nil, ire(cql2Refusal)
}

// PrepareCqlQuery implements prepare_cql_query (CQL2).
func (h *Handler) PrepareCqlQuery(context.Context, []byte, cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	return nil, ire(cql2Refusal)
}

// ExecutePreparedCqlQuery implements execute_prepared_cql_query (CQL2).
func (h *Handler) ExecutePreparedCqlQuery(context.Context, int32, [][]byte) (*cassandra.CqlResult_, error) {
	return nil, ire(cql2Refusal)
}

// cqlRunner is the engine's CQL runner, or Cassandra's refusal of the
// call before login, or thriftd's refusal without one.
//
// thriftd does not parse the statements it passes through, so it cannot
// check a user's permissions on what a statement touches, and the cluster
// sees thriftd's own login, not the user's. When permissions are enforced
// (an Authorizer), CQL over Thrift is for the users who may do everything
// a statement can: every permission on every keyspace (a superuser, or
// read, write and schema granted on all keyspaces); the others are refused
// with Cassandra's message for the first permission they lack.
func (h *Handler) cqlRunner(ctx context.Context) (store.CQLRunner, error) {
	if err := h.requireLogin(ctx); err != nil {
		return nil, err
	}
	runner, ok := h.engine.(store.CQLRunner)
	if !ok {
		return nil, ire(cql3Refusal)
	}
	if err := h.authorize(ctx, "", "", ActionSelect, ActionModify, ActionCreate, ActionAlter, ActionDrop); err != nil {
		return nil, err
	}
	return runner, nil
}

// ExecuteCql3Query implements execute_cql3_query.
func (h *Handler) ExecuteCql3Query(ctx context.Context, query []byte, compression cassandra.Compression, cl cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	runner, err := h.cqlRunner(ctx)
	if err != nil {
		return nil, err
	}
	if err := knownConsistency(cl); err != nil {
		return nil, err
	}
	statement, err := cqlText(query, compression)
	if err != nil {
		return nil, err
	}
	return h.runCQL(ctx, runner, "execute_cql3_query", currentKeyspace(ctx), statement, nil)
}

// PrepareCql3Query implements prepare_cql3_query: the statement is
// prepared on the cluster, and known to every connection of this server
// by its id, which is Cassandra 3.11's: the Java hash code of the
// connection's keyspace and the statement's text.
func (h *Handler) PrepareCql3Query(ctx context.Context, query []byte, compression cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	runner, err := h.cqlRunner(ctx)
	if err != nil {
		return nil, err
	}
	statement, err := cqlText(query, compression)
	if err != nil {
		return nil, err
	}
	keyspace := currentKeyspace(ctx)
	vars, err := runner.PrepareCQL(ctx, keyspace, statement)
	if err != nil {
		return nil, h.storageError(ctx, "prepare_cql3_query", err)
	}
	id := javaHashCode(keyspace + statement)
	h.cql.add(id, preparedCQL{keyspace: keyspace, statement: statement, markers: len(vars)})
	res := &cassandra.CqlPreparedResult_{ItemId: id, Count: int32(len(vars)), VariableTypes: []string{}, VariableNames: []string{}}
	for _, v := range vars {
		res.VariableNames = append(res.VariableNames, v.Name)
		res.VariableTypes = append(res.VariableTypes, v.Type)
	}
	return res, nil
}

// ExecutePreparedCql3Query implements execute_prepared_cql3_query: the
// statement runs in the keyspace it was prepared in, as in Cassandra.
func (h *Handler) ExecutePreparedCql3Query(ctx context.Context, itemID int32, values [][]byte, cl cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	runner, err := h.cqlRunner(ctx)
	if err != nil {
		return nil, err
	}
	p, ok := h.cql.get(itemID)
	if !ok {
		return nil, iref("Prepared query with ID %d not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", itemID)
	}
	if err := knownConsistency(cl); err != nil {
		return nil, err
	}
	if len(values) != p.markers {
		return nil, iref("there were %d markers(?) in CQL but %d bound variables", p.markers, len(values))
	}
	if values == nil {
		values = [][]byte{}
	}
	return h.runCQL(ctx, runner, "execute_prepared_cql3_query", p.keyspace, p.statement, values)
}

// runCQL runs a statement and answers its result; a USE statement makes
// its keyspace the connection's.
func (h *Handler) runCQL(ctx context.Context, runner store.CQLRunner, op, keyspace, statement string, values [][]byte) (*cassandra.CqlResult_, error) {
	res, err := runner.ExecuteCQL(ctx, keyspace, statement, values)
	if err != nil {
		return nil, h.storageError(ctx, op, err)
	}
	if res.Keyspace != "" {
		if s := SessionFrom(ctx); s != nil {
			s.SetKeyspace(res.Keyspace)
		}
	}
	return cqlResultToThrift(res), nil
}

// currentKeyspace is the connection's keyspace, or "".
func currentKeyspace(ctx context.Context) string {
	if s := SessionFrom(ctx); s != nil {
		return s.Keyspace()
	}
	return ""
}

// cqlText is a statement's text: UTF-8, or zlib-compressed UTF-8 with
// Compression GZIP (which Cassandra reads with java.util.zip.Inflater).
func cqlText(query []byte, compression cassandra.Compression) (string, error) {
	switch compression {
	case cassandra.Compression_NONE:
	case cassandra.Compression_GZIP:
		r, err := zlib.NewReader(bytes.NewReader(query))
		if err != nil {
			return "", iref("Error deflating query string: %v", err)
		}
		defer r.Close()
		if query, err = io.ReadAll(r); err != nil {
			return "", iref("Error deflating query string: %v", err)
		}
	default:
		return "", iref("Unknown Compression type: %d", int64(compression))
	}
	if !utf8.Valid(query) {
		return "", ire("The query is not valid UTF-8")
	}
	return string(query), nil
}

// javaHashCode is Java's String.hashCode of s.
func javaHashCode(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// maxPreparedCQL bounds how many prepared statements a server keeps; one
// more evicts one of them, which its clients find gone (as Cassandra's
// statement cache evicts).
const maxPreparedCQL = 10000

// preparedCQL is a statement prepared through prepare_cql3_query.
type preparedCQL struct {
	keyspace, statement string
	markers             int
}

// preparedStatements are the statements prepared on this server, by id.
// The zero value is ready to use.
type preparedStatements struct {
	mu   sync.Mutex
	byID map[int32]preparedCQL
}

func (p *preparedStatements) add(id int32, s preparedCQL) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = make(map[int32]preparedCQL)
	}
	if _, ok := p.byID[id]; !ok && len(p.byID) >= maxPreparedCQL {
		for evict := range p.byID {
			delete(p.byID, evict)
			break
		}
	}
	p.byID[id] = s
}

func (p *preparedStatements) get(id int32) (preparedCQL, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.byID[id]
	return s, ok
}

// cqlResultToThrift is a CQL result as Cassandra 3.11 answers it over
// Thrift: VOID for a statement without a result set; ROWS with every
// column of every row (name and value; null values left out, no
// timestamps), an empty row key, and a schema naming each column's type
// with UTF8Type names.
func cqlResultToThrift(r *store.CQLResult) *cassandra.CqlResult_ {
	if r.Kind != store.CQLRows {
		return &cassandra.CqlResult_{Type: cassandra.CqlResultType_VOID}
	}
	const utf8Type = "UTF8Type"
	schema := &cassandra.CqlMetadata{
		NameTypes:        make(map[string]string, len(r.Columns)),
		ValueTypes:       make(map[string]string, len(r.Columns)),
		DefaultNameType:  utf8Type,
		DefaultValueType: utf8Type,
	}
	for _, c := range r.Columns {
		schema.NameTypes[c.Name] = utf8Type
		schema.ValueTypes[c.Name] = c.Type
	}
	rows := make([]*cassandra.CqlRow, len(r.Rows))
	for i, row := range r.Rows {
		cols := make([]*cassandra.Column, len(r.Columns))
		for j, c := range r.Columns {
			cols[j] = &cassandra.Column{Name: []byte(c.Name), Value: row[j]}
		}
		rows[i] = &cassandra.CqlRow{Key: []byte{}, Columns: cols}
	}
	return &cassandra.CqlResult_{Type: cassandra.CqlResultType_ROWS, Rows: rows, Schema: schema}
}

// SetCqlVersion implements set_cql_version: recorded, without effect
// (Cassandra 3.x ignores it too).
func (h *Handler) SetCqlVersion(ctx context.Context, version string) error {
	if s := SessionFrom(ctx); s != nil {
		s.SetCQLVersion(version)
	}
	return nil
}
