package cqlstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/store"
)

var _ store.CQLRunner = (*Engine)(nil)

// useStatement is a USE statement, which the driver does not run (a
// session's keyspace is fixed): the engine checks the keyspace and the
// caller makes it its default.
var useStatement = regexp.MustCompile(`(?is)^\s*USE\s+("(?:[^"]|"")+"|[a-z][a-z0-9_]*)\s*;?\s*$`)

// ExecuteCQL implements store.CQLRunner: the statement goes to the
// cluster as it is, at the level ctx carries, with keyspace (behind
// Options.KeyspacePrefix) as the default keyspace of unqualified names:
// named by the request from protocol version 5 (Cassandra 4.0 and
// later), and on version 4 (Cassandra 3.x, ScyllaDB) by running on a
// session whose connections are in the keyspace (keyspaceSessions).
// values, when not nil, are bound to the statement's markers as they are
// serialised.
func (e *Engine) ExecuteCQL(ctx context.Context, keyspace, statement string, values [][]byte) (*store.CQLResult, error) {
	if m := useStatement.FindStringSubmatch(statement); m != nil {
		return e.use(ctx, cqlIdentifier(m[1]))
	}
	bind := func(info *gocql.QueryInfo) ([]any, error) {
		if values == nil && len(info.Args) > 0 {
			return nil, &store.CQLRefusedError{Message: "Invalid amount of bind variables"}
		}
		if len(values) != len(info.Args) {
			return nil, &store.CQLRefusedError{Message: fmt.Sprintf("there were %d markers(?) in CQL but %d bound variables", len(info.Args), len(values))}
		}
		out := make([]any, len(values))
		for i, v := range values {
			out[i] = rawValue(v)
		}
		return out, nil
	}
	if keyspace != "" {
		keyspace = e.opts.KeyspacePrefix + keyspace
	}
	session, perRequest, done := e.passthroughSession(ctx, keyspace)
	res, err := e.executeCQL(ctx, session, perRequest, statement, bind)
	done(err)
	if err != nil {
		return nil, cqlError("execute a CQL statement", err)
	}
	return res, nil
}

// executeCQL runs a statement for ExecuteCQL on session, in keyspace
// perRequest when it is set; its error is the driver's.
func (e *Engine) executeCQL(ctx context.Context, session *gocql.Session, perRequest, statement string, bind func(*gocql.QueryInfo) ([]any, error)) (*store.CQLResult, error) {
	q := session.Bind(statement, bind).Consistency(e.consistency(ctx))
	if perRequest != "" {
		q = q.SetKeyspace(perRequest)
	}
	iter := q.IterContext(ctx)
	cols := iter.Columns()
	res := &store.CQLResult{Kind: store.CQLVoid}
	if len(cols) > 0 {
		res.Kind = store.CQLRows
		res.Columns = make([]store.CQLColumn, len(cols))
		var defs columnDefs
		for i, c := range cols {
			res.Columns[i] = store.CQLColumn{Name: c.Name, Type: e.marshalClass(ctx, c, &defs)}
		}
		cells := make([]rawCell, len(cols))
		dest := make([]any, len(cols))
		for i := range cells {
			dest[i] = &cells[i]
		}
		for iter.Scan(dest...) {
			row := make([][]byte, len(cols))
			for i, c := range cells {
				row[i] = c.value
			}
			res.Rows = append(res.Rows, row)
		}
	}
	if err := iter.Close(); err != nil {
		return nil, err
	}
	return res, nil
}

// PrepareCQL implements store.CQLRunner.
func (e *Engine) PrepareCQL(ctx context.Context, keyspace, statement string) ([]store.CQLColumn, error) {
	if m := useStatement.FindStringSubmatch(statement); m != nil {
		return nil, nil
	}
	if keyspace != "" {
		keyspace = e.opts.KeyspacePrefix + keyspace
	}
	session, _, done := e.passthroughSession(ctx, keyspace)
	// The keyspace is the one of the statement's request on protocol 5,
	// and where the driver looks up tables on any.
	meta, err := session.StatementMetadata(ctx, statement, keyspace)
	done(err)
	if err != nil {
		return nil, cqlError("prepare a CQL statement", err)
	}
	vars := make([]store.CQLColumn, len(meta.BindColumns))
	var defs columnDefs
	for i, c := range meta.BindColumns {
		vars[i] = store.CQLColumn{Name: c.Name, Type: e.marshalClass(ctx, c, &defs)}
	}
	return vars, nil
}

// use checks that keyspace exists for a USE statement.
func (e *Engine) use(ctx context.Context, keyspace string) (*store.CQLResult, error) {
	var name string
	err := e.session.Query("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", e.opts.KeyspacePrefix+keyspace).
		ScanContext(ctx, &name)
	if errors.Is(err, gocql.ErrNotFound) {
		return nil, &store.CQLRefusedError{Message: fmt.Sprintf("Keyspace '%s' does not exist", keyspace)}
	}
	if err != nil {
		return nil, wrapErr("USE "+keyspace, err)
	}
	return &store.CQLResult{Kind: store.CQLVoid, Keyspace: keyspace}, nil
}

// cqlIdentifier is an identifier as CQL reads it: a quoted one as
// written, any other in lower case.
func cqlIdentifier(s string) string {
	if strings.HasPrefix(s, `"`) {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return strings.ToLower(s)
}

// cqlError maps a driver error: a statement the cluster refused (syntax,
// authorization, validity, configuration, existence) is the client's, with
// the cluster's message; the rest as every engine error (wrapErr).
func cqlError(what string, err error) error {
	var refused *store.CQLRefusedError
	if errors.As(err, &refused) {
		return refused
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		switch re.Code() {
		case gocql.ErrCodeSyntax, gocql.ErrCodeUnauthorized, gocql.ErrCodeInvalid, gocql.ErrCodeConfig, gocql.ErrCodeAlreadyExists:
			return &store.CQLRefusedError{Message: re.Message()}
		}
	}
	return wrapErr(what, err)
}

// rawValue is a bound value as it is serialised; nil is null.
type rawValue []byte

// MarshalCQL implements gocql.Marshaler.
func (v rawValue) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return v, nil }

// rawCell receives a column's value as it is serialised; nil is null.
type rawCell struct{ value []byte }

// UnmarshalCQL implements gocql.Unmarshaler.
func (c *rawCell) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	if data == nil {
		c.value = nil
		return nil
	}
	c.value = append(make([]byte, 0, len(data)), data...)
	return nil
}

// marshalPackage qualifies Cassandra's marshal classes.
const marshalPackage = "org.apache.cassandra.db.marshal."

// simpleClasses are the marshal classes of the native types.
var simpleClasses = map[gocql.Type]string{
	gocql.TypeAscii:     "AsciiType",
	gocql.TypeBigInt:    "LongType",
	gocql.TypeBlob:      "BytesType",
	gocql.TypeBoolean:   "BooleanType",
	gocql.TypeCounter:   "CounterColumnType",
	gocql.TypeDecimal:   "DecimalType",
	gocql.TypeDouble:    "DoubleType",
	gocql.TypeFloat:     "FloatType",
	gocql.TypeInt:       "Int32Type",
	gocql.TypeText:      "UTF8Type",
	gocql.TypeTimestamp: "TimestampType",
	gocql.TypeUUID:      "UUIDType",
	gocql.TypeVarchar:   "UTF8Type",
	gocql.TypeVarint:    "IntegerType",
	gocql.TypeTimeUUID:  "TimeUUIDType",
	gocql.TypeInet:      "InetAddressType",
	gocql.TypeDate:      "SimpleDateType",
	gocql.TypeTime:      "TimeType",
	gocql.TypeSmallInt:  "ShortType",
	gocql.TypeTinyInt:   "ByteType",
	gocql.TypeDuration:  "DurationType",
}

// marshalClass is a column's type as Cassandra 3.11 names it to Thrift
// clients (AbstractType.toString): its marshal class, with FrozenType
// around a frozen collection or user type. A table column's collection or
// user type is frozen as the table's definition says (the native protocol
// does not tell); any other top-level one is taken as not frozen.
func (e *Engine) marshalClass(ctx context.Context, c gocql.ColumnInfo, defs *columnDefs) string {
	multiCell := true
	switch c.TypeInfo.Type() {
	case gocql.TypeList, gocql.TypeSet, gocql.TypeMap, gocql.TypeUDT:
		multiCell = !strings.HasPrefix(defs.cqlType(ctx, e, c.Keyspace, c.Table, c.Name), "frozen<")
	}
	return typeClass(c.TypeInfo, multiCell, false)
}

// columnDefs are the CQL types of the columns of the tables a statement
// reads, from the cluster's schema, each table's read once.
type columnDefs struct {
	tables map[[2]string]map[string]string
}

// cqlType is a column's CQL type as its table declares it, or "" if it
// is not a column of a table the schema knows (an expression, say): from
// the driver's schema metadata, else (a table it has not seen yet) from
// the cluster's schema tables.
func (d *columnDefs) cqlType(ctx context.Context, e *Engine, keyspace, table, column string) string {
	if km, err := e.session.KeyspaceMetadata(keyspace); err == nil {
		if tm, ok := km.Tables[table]; ok {
			if cm, ok := tm.Columns[column]; ok {
				return cm.Validator
			}
		}
	}
	key := [2]string{keyspace, table}
	cols, ok := d.tables[key]
	if !ok {
		cols = map[string]string{}
		iter := e.session.Query("SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?", keyspace, table).
			Consistency(gocql.One).IterContext(ctx)
		var name, typ string
		for iter.Scan(&name, &typ) {
			cols[name] = typ
		}
		if err := iter.Close(); err != nil {
			e.log.WarnContext(ctx, "cqlstore: reading the columns of a table failed; its collections are taken as not frozen",
				"keyspace", keyspace, "table", table, "err", err)
		}
		if d.tables == nil {
			d.tables = map[[2]string]map[string]string{}
		}
		d.tables[key] = cols
	}
	return cols[column]
}

// typeClass is Cassandra's AbstractType.toString(ignoreFreezing) of t,
// which is multi-cell (not frozen) if multiCell.
func typeClass(t gocql.TypeInfo, multiCell, ignoreFreezing bool) string {
	frozen := func(s string) string {
		if ignoreFreezing || multiCell {
			return s
		}
		return marshalPackage + "FrozenType(" + s + ")"
	}
	// Inside a frozen type, the types are printed without FrozenType;
	// inside a multi-cell one, with it.
	inner := func(t gocql.TypeInfo) string { return typeClass(t, false, ignoreFreezing || !multiCell) }
	switch t := t.(type) {
	case gocql.CollectionType:
		switch t.Type() {
		case gocql.TypeList:
			return frozen(marshalPackage + "ListType(" + inner(t.Elem) + ")")
		case gocql.TypeSet:
			return frozen(marshalPackage + "SetType(" + inner(t.Elem) + ")")
		case gocql.TypeMap:
			return frozen(marshalPackage + "MapType(" + inner(t.Key) + "," + inner(t.Elem) + ")")
		}
	case gocql.TupleTypeInfo:
		parts := make([]string, len(t.Elems))
		for i, el := range t.Elems {
			parts[i] = typeClass(el, false, true)
		}
		return marshalPackage + "TupleType(" + strings.Join(parts, ",") + ")"
	case gocql.UDTTypeInfo:
		parts := []string{t.Keyspace, fmt.Sprintf("%x", t.Name)}
		for _, f := range t.Elements {
			parts = append(parts, fmt.Sprintf("%x", f.Name)+":"+inner(f.Type))
		}
		return frozen(marshalPackage + "UserType(" + strings.Join(parts, ",") + ")")
	case gocql.VectorType:
		return fmt.Sprintf("%sVectorType(%s,%d)", marshalPackage, typeClass(t.SubType, false, true), t.Dimensions)
	}
	if name, ok := simpleClasses[t.Type()]; ok {
		return marshalPackage + name
	}
	// A custom type is named by its class.
	return fmt.Sprint(t)
}
