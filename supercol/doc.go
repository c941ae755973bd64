// Package supercol maps Thrift-era column families — Standard and Super,
// dynamic, composite-column, static and counter families — onto CQL3
// tables, and maps each legacy cell (row key, super column name, column
// name, value) onto the CQL3 row and column that hold it. It is pure: no
// I/O, only store/marshal.
package supercol
