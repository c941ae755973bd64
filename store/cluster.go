package store

import "context"

// The interfaces below are optional parts of an engine over a cluster: the
// Thrift API asks an engine for them with a type assertion and answers as
// one node owning the whole ring when it lacks them (the embedded engine).

// RingSource is an engine whose data is spread over a cluster's token
// ring.
type RingSource interface {
	// Ring describes the cluster's token ring as the engine sees it now.
	Ring(ctx context.Context) (*Ring, error)
}

// Ring is a cluster's token ring.
type Ring struct {
	// Ranges are the ring's token ranges in token order; together they
	// cover the ring, the first one wrapping around its end.
	Ranges []TokenRange
	// Datacenter and Rack are where the engine's own coordinator sits
	// (the node it contacts first): the cluster's local data center.
	Datacenter, Rack string
}

// TokenRange is the range of tokens (Start, End], in the partitioner's
// string form, and the cluster node that owns End.
type TokenRange struct {
	Start, End string
	Owner      Node
}

// Node is a node of a cluster.
type Node struct {
	Address, Datacenter, Rack string
}

// SplitSource is an engine that can cut a table's token range into splits
// of about a given number of rows from what its cluster knows of the
// table's size, without reading the rows.
type SplitSource interface {
	// Splits cuts the range (start, end] (partitioner string forms; equal
	// bounds: the whole ring from there) into consecutive splits of about
	// rowsPerSplit rows, the first starting at start and the last ending
	// at end.
	Splits(ctx context.Context, t *Table, start, end string, rowsPerSplit int) ([]Split, error)
}

// Split is a range of tokens (Start, End] and the estimated number of
// rows in it.
type Split struct {
	Start, End string
	Rows       int64
}

// CQLRunner is an engine that runs CQL statements on its cluster for
// clients of the Thrift API (execute_cql3_query and its prepared forms).
// Statements run at the consistency level ctx carries.
type CQLRunner interface {
	// ExecuteCQL runs one statement with values bound to its markers
	// (none: nil). keyspace is the default keyspace of unqualified names
	// ("": none). A USE statement runs nowhere: it checks the keyspace
	// exists and reports it in CQLResult.Keyspace.
	ExecuteCQL(ctx context.Context, keyspace, statement string, values [][]byte) (*CQLResult, error)
	// PrepareCQL prepares a statement and describes its bound variables.
	PrepareCQL(ctx context.Context, keyspace, statement string) ([]CQLColumn, error)
}

// CQLResultKind is what a CQL statement returned.
type CQLResultKind uint8

// The kinds of CQL results.
const (
	// CQLVoid: nothing (DML, DDL, USE).
	CQLVoid CQLResultKind = iota
	// CQLRows: a result set (SELECT, conditional updates).
	CQLRows
)

// CQLResult is the result of a CQL statement.
type CQLResult struct {
	Kind CQLResultKind
	// Columns describe the columns of a result set.
	Columns []CQLColumn
	// Rows are the result set's rows, one value per column in their
	// serialised form; nil is null.
	Rows [][][]byte
	// Keyspace is the keyspace a USE statement switched to.
	Keyspace string
}

// CQLColumn is a column of a result set or a bound variable: its name and
// type as Cassandra's marshal class
// (org.apache.cassandra.db.marshal.Int32Type, ListType(...), ...).
type CQLColumn struct {
	Name, Type string
}

// CQLRefusedError is a statement the cluster refused as invalid (a syntax
// error, an unknown table, a wrong value, an unauthorized access): the
// client's to fix. Message is the cluster's own.
type CQLRefusedError struct {
	Message string
}

func (e *CQLRefusedError) Error() string { return e.Message }

type serialConsistencyKey struct{}

// WithSerialConsistency returns ctx carrying the serial consistency level
// of a conditional write (SERIAL or LOCAL_SERIAL): the level of its
// Paxos round, next to the commit level WithConsistency carries.
func WithSerialConsistency(ctx context.Context, c Consistency) context.Context {
	return context.WithValue(ctx, serialConsistencyKey{}, c)
}

// SerialConsistencyFrom is the serial level ctx carries, ConsistencyDefault
// if none.
func SerialConsistencyFrom(ctx context.Context) Consistency {
	c, _ := ctx.Value(serialConsistencyKey{}).(Consistency)
	return c
}
