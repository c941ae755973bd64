// Package supercol maps Thrift-era column families — Standard and Super,
// dynamic, composite-column, static and counter families — onto CQL3
// tables, and maps each legacy cell (row key, super column name, column
// name, value) onto the CQL3 row and column that hold it. It is pure: no
// I/O, only store/marshal.
//
// # Shapes
//
// Plan turns a Family into a Mapping: a Table (columns, DDL, the reason
// for its shape, warnings) and the placement of cells.
//
//   - compact, Cassandra's own view of a legacy family: the row key is the
//     partition key (key, or key1..keyN split from a CompositeType key),
//     the column name the clustering column column1 (column1..columnN
//     split from a CompositeType comparator; a ReversedType component is
//     a DESC clustering column of its base type), and one value column.
//     A Super family has the super column name first (column1, split the
//     same way) and the subcolumn name next. key_aliases name the
//     partition key columns in order (key_alias the first),
//     column_aliases the clustering columns in order, value_alias the
//     value column. The value column has the
//     default validator's type; when declared columns have other
//     validators, one column cannot carry their types and it is a blob
//     (with a warning). Counter families get value counter.
//   - pivot, for Super families whose subcolumn names are a small known
//     set (declared in column_metadata or seen by a Sample): one row per
//     super column, PRIMARY KEY (key, column1), and one typed regular
//     column per subcolumn name. Column identifiers are the subcomparator's
//     text form of the name with every character outside [A-Za-z0-9_]
//     replaced by '_' (case kept, quoted when needed); clashing names make
//     the shape not applicable. A cell under another subcolumn name makes
//     Map fail with ErrUnknownColumn, so that a conversion stops instead of
//     dropping it.
//   - static, for Standard families with column_metadata: one typed column
//     per declared column, PRIMARY KEY (key). When the sample saw other
//     names, or no sample is given, the mixed form keeps them too: PRIMARY
//     KEY (key, column1), the declared columns static, and a value column
//     for (column1, value) rows of the other names.
//
// Without an explicit shape, a Super family pivots when its set of names
// qualifies (names seen only by the sample must be field-like text names
// under a UTF8Type or AsciiType subcomparator, at most 32 in all) and is
// compact otherwise; a Standard family with column_metadata is static; all
// other families, and all Super counter families, are compact.
//
// # Choices where CQL differs from the legacy model
//
//   - CQL has no null clustering values: a CompositeType name with fewer
//     components than the comparator declares is written with empty values
//     in the missing trailing clustering columns (an empty value is valid
//     for every type; in cqlsh it is written as an empty blob cast to the
//     type). Such a name and the one whose trailing components are
//     explicitly empty land on the same CQL row.
//   - Composite partition key columns are named key1..keyN (Cassandra's own
//     view names them key, key2, ...), and key_aliases (key_alias) replace them.
//   - Types without a CQL equivalent (LexicalUUIDType, DynamicCompositeType,
//     nested composites, ...) are kept as quoted custom types, with a
//     warning.
//   - KEYS indexes are carried only by the static shape; default TTLs are
//     not set on the table, since every converted cell carries its own
//     remaining TTL (a warning says how to set it afterwards).
package supercol
