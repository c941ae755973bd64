// Package migrate is the conversion pipeline of convert: a Source streams a
// legacy keyspace's rows, supercol maps each cell onto a CQL3 table, the
// TTL/writetime policy decides what is written, and a Sink (a cqlsh script or
// a live cluster through gocql) receives the statements, all built by one
// statement generator. Checkpoints make a run resumable; Verify compares a
// source with a target cell by cell.
package migrate
