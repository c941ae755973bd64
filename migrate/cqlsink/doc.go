// Package cqlsink writes a conversion into a live Cassandra or ScyllaDB
// cluster through gocql, and reads it back for verification.
//
// The sink creates the keyspace and the tables that are missing, and
// refuses to write into an existing table whose columns (names, kinds,
// types, clustering order) differ from the planned ones, as read from
// system_schema.columns. Statements are prepared by gocql and sent in
// unlogged batches, one partition per batch (counter batches for counter
// tables), by a bounded pool of workers, optionally rate limited, retried
// with exponential backoff.
//
// Counters are not idempotent. An increment whose outcome is unknown (a
// timeout, or any increment of a resumed run, whose interruption may have
// come after the cluster applied it but before the checkpoint recorded
// it) is first probed: when the target already holds the counter cell,
// the increment is skipped. This assumes the target counter table starts
// empty, which is what a conversion into a new table gives.
package cqlsink
