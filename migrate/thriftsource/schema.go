package thriftsource

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// What Cassandra 1.2 to 3.11 describe differently from thriftd, and what
// familyDef and withCQLNames do about it:
//
//   - 3.0+ describes a Super family with its internal columns in
//     column_metadata: one with an empty name whose validation_class is
//     MapType(subcomparator, default validator) (the map a super column
//     is stored as), and, since 3.0.16/3.11.2, "value" with the default
//     validator (the compact value of the family's CQL view). Neither is
//     a declared subcolumn: both are dropped. (A subcolumn declared as
//     "value" with another validator is kept; declared with the default
//     validator it would change nothing.)
//   - 2.0+ reports key_alias "key" for every family with a single key
//     column, the name it gets by default: dropped.
//   - 2.0+ no longer reports column_aliases and value_alias, nor
//     key_alias when the key has several columns: a table created through
//     CQL WITH COMPACT STORAGE loses the names of its key, clustering and
//     value columns. They are read from the CQL schema (system_schema
//     in 3.x, system.schema_columns in 2.x) through execute_cql3_query;
//     the names Cassandra gives by default (key, key2..., column1...,
//     value) are left out, so that the table is named as thriftd's would
//     be.
//   - 2.0+ lists declared columns in an order of its own, not the
//     order they were declared in (which thriftd keeps): they are sorted
//     in the comparator's order.
//   - Validators come as fully qualified class names, DateType as
//     TimestampType (3.x): store/marshal reads both.
//   - CQL tables without COMPACT STORAGE, and materialized views, are not
//     listed by describe_keyspace (Thrift cannot read them):
//     UnlistedTables names them.

// familyDef converts a CfDef as thriftd or Cassandra 1.2 to 3.11
// describes it. With sortColumns, the declared columns are put in the
// comparator's order: Cassandra 2.0+ lists them in an order of its own
// (3.x: a hash order), having kept no trace of the order they were
// declared in, and the columns of a converted table follow this order.
func familyDef(cf *cassandra.CfDef, sortColumns bool) (supercol.FamilyDef, error) {
	def := supercol.FamilyDef{
		Name:          cf.Name,
		Super:         cf.ColumnType == "Super",
		KeyValidator:  cf.GetKeyValidationClass(),
		Comparator:    cf.ComparatorType,
		SubComparator: cf.GetSubcomparatorType(),
		KeyAlias:      string(cf.KeyAlias),
		ValueAlias:    string(cf.ValueAlias),
		DefaultTTL:    cf.GetDefaultTimeToLive(),
	}
	if def.KeyAlias == defaultKeyName {
		def.KeyAlias = ""
	}
	def.DefaultValidator = cf.GetDefaultValidationClass()
	for _, a := range cf.ColumnAliases {
		def.ColumnAliases = append(def.ColumnAliases, string(a))
	}
	nameTypeName := def.Comparator
	if def.Super {
		nameTypeName = def.SubComparator
	}
	nameType, err := marshal.Parse(nameTypeName)
	if err != nil {
		// Left to supercol.NewFamily to refuse, naming the family, so
		// that the other families can still be converted (--family).
		return def, nil
	}
	declared := cf.ColumnMetadata
	if sortColumns {
		declared = slices.Clone(declared)
		slices.SortStableFunc(declared, func(a, b *cassandra.ColumnDef) int {
			return nameType.Compare(a.Name, b.Name)
		})
	}
	for _, c := range declared {
		if internalColumn(cf, c) {
			continue
		}
		col := supercol.ColumnDef{Name: nameType.String(c.Name), Validator: c.ValidationClass}
		if c.IndexType != nil {
			col.IndexName = c.GetIndexName()
			if col.IndexName == "" {
				col.IndexName = fmt.Sprintf("%s_%s_idx", cf.Name, col.Name)
			}
		}
		def.Columns = append(def.Columns, col)
	}
	return def, nil
}

// defaultKeyName is the name Cassandra gives a single key column.
const defaultKeyName = "key"

// internalColumn reports whether a column_metadata entry is one of the
// columns Cassandra 3.x adds to its description of a family (see the top
// of this file) rather than a declared column. No declared column has an
// empty name: Thrift refuses empty column names.
func internalColumn(cf *cassandra.CfDef, c *cassandra.ColumnDef) bool {
	if len(c.Name) == 0 {
		return true
	}
	if cf.ColumnType != "Super" || string(c.Name) != "value" {
		return false
	}
	dv, err := marshal.Parse(cf.GetDefaultValidationClass())
	if err != nil {
		return false
	}
	v, err := marshal.Parse(c.ValidationClass)
	return err == nil && v.Name() == dv.Name()
}

// cqlTable is a table of the keyspace as the CQL schema describes it.
type cqlTable struct {
	partition  []string // in position order
	clustering []string // in position order
	// value is the compact value column: the regular column of a
	// compact table (compact_value in 2.x).
	value   string
	regular int // regular columns (3.x), compact values (2.x)
}

// cqlColumn is one row of the CQL schema's columns table.
type cqlColumn struct {
	table, name, kind string
	position          int
}

// readCQLSchema reads the keyspace's columns from the CQL schema over
// execute_cql3_query: system_schema.columns (3.x), else
// system.schema_columns (2.x). It returns nil, nil when the server has
// neither (thriftd, Cassandra 1.2: the CfDefs then say all there is).
func (s *Source) readCQLSchema(ctx context.Context) (map[string]*cqlTable, error) {
	lit := "'" + strings.ReplaceAll(s.keyspace, "'", "''") + "'"
	queries := []struct {
		cql     string
		version int
	}{
		{"SELECT table_name, column_name, kind, position FROM system_schema.columns WHERE keyspace_name = " + lit, 3},
		{"SELECT columnfamily_name, column_name, type, component_index FROM system.schema_columns WHERE keyspace_name = " + lit, 2},
	}
	for _, q := range queries {
		var res *cassandra.CqlResult_
		err := s.conn.call(ctx, func(ctx context.Context, client *cassandra.CassandraClient) error {
			var err error
			res, err = client.ExecuteCql3Query(ctx, []byte(q.cql), cassandra.Compression_NONE, cassandra.ConsistencyLevel_ONE)
			return err
		})
		if err != nil {
			if _, refused := err.(*cassandra.InvalidRequestException); refused {
				continue // no such table, or no CQL at all
			}
			return nil, fmt.Errorf("read the CQL schema: %w", describeError(err))
		}
		var cols []cqlColumn
		for _, row := range res.Rows {
			c, ok := decodeSchemaRow(row, q.version)
			if ok {
				cols = append(cols, c)
			}
		}
		return cqlTables(cols), nil
	}
	return nil, nil
}

// decodeSchemaRow reads one row of the queries of readCQLSchema: three
// text columns and an int (null for 2.x's unset component_index).
func decodeSchemaRow(row *cassandra.CqlRow, version int) (cqlColumn, bool) {
	if len(row.Columns) != 4 {
		return cqlColumn{}, false
	}
	c := cqlColumn{table: string(row.Columns[0].Value), name: string(row.Columns[1].Value), kind: string(row.Columns[2].Value)}
	if v := row.Columns[3].Value; len(v) == 4 {
		c.position = int(int32(binary.BigEndian.Uint32(v)))
	}
	if version == 2 {
		// 2.x kinds, as 3.x names them.
		switch c.kind {
		case "clustering_key":
			c.kind = "clustering"
		case "compact_value":
			c.kind = "regular"
		case "regular":
			c.kind = "static" // a declared column of a compact table
		}
	}
	return c, true
}

// cqlTables groups columns by table.
func cqlTables(cols []cqlColumn) map[string]*cqlTable {
	slices.SortStableFunc(cols, func(a, b cqlColumn) int { return a.position - b.position })
	tables := map[string]*cqlTable{}
	for _, c := range cols {
		t := tables[c.table]
		if t == nil {
			t = &cqlTable{}
			tables[c.table] = t
		}
		switch c.kind {
		case "partition_key":
			t.partition = append(t.partition, c.name)
		case "clustering":
			t.clustering = append(t.clustering, c.name)
		case "regular":
			t.regular++
			t.value = c.name
		}
	}
	return tables
}

// withCQLNames names the key, clustering and value columns of def as the
// CQL schema does, where its names are not the defaults.
func withCQLNames(def *supercol.FamilyDef, t *cqlTable) {
	if len(t.partition) > 1 {
		var aliases []string
		for i, n := range t.partition {
			if n == defaultKeyName || n == defaultKeyName+strconv.Itoa(i+1) {
				n = ""
			}
			aliases = append(aliases, n)
		}
		if slices.ContainsFunc(aliases, func(n string) bool { return n != "" }) {
			def.KeyAliases = aliases
		}
	} else if len(t.partition) == 1 && def.KeyAlias == "" && t.partition[0] != defaultKeyName {
		def.KeyAlias = t.partition[0]
	}
	if def.Super {
		// column1 is the super column name; "" and value are internal.
		return
	}
	if len(def.ColumnAliases) == 0 {
		var aliases []string
		for i, n := range t.clustering {
			if n == "column"+strconv.Itoa(i+1) {
				n = ""
			}
			aliases = append(aliases, n)
		}
		if slices.ContainsFunc(aliases, func(n string) bool { return n != "" }) {
			def.ColumnAliases = aliases
		}
	}
	if def.ValueAlias == "" && t.regular == 1 && t.value != "" && t.value != "value" {
		def.ValueAlias = t.value
	}
}

// UnlistedTables names the tables and views of the keyspace that the CQL
// schema has and describe_keyspace does not list: CQL tables without
// COMPACT STORAGE, which Thrift cannot read, so that a conversion does
// not convert them. Empty when the server has no CQL schema to read
// (thriftd, Cassandra 1.2).
func (s *Source) UnlistedTables(ctx context.Context) ([]string, error) {
	ks, err := s.describe(ctx)
	if err != nil {
		return nil, err
	}
	tables, err := s.readCQLSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("thrift source %s: %w", s.addr, err)
	}
	listed := map[string]bool{}
	for _, cf := range ks.CfDefs {
		listed[cf.Name] = true
	}
	var out []string
	for name := range tables {
		if !listed[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}
