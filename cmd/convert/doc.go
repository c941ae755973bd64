// Command convert rewrites a Thrift-era Cassandra keyspace — super column
// families above all — into CQL3 tables, keeping every cell's writetime
// and writing TTLs as the time the cells have left.
//
// Usage:
//
//	convert plan    --from SRC                 what each family becomes, sizes, large partitions
//	convert schema  --from SRC --to DST        create the keyspace and tables only
//	convert data    --from SRC --to DST        create the schema and copy every live cell
//	convert verify  --from SRC --to DST        compare source and target cell by cell
//	convert fixtures [--name M] [--check]       round-trip the fixture models (below)
//	convert fixtures --name M (--out DIR | --load thrift://host:port) | --list
//
// Sources (--from):
//
//	thrift://host:port/Keyspace     a live Cassandra (or thriftd) over Thrift
//	badger:DIR/Keyspace             a thriftd data directory (thriftd stopped)
//	json:PATH --schema FILE         sstable2json dumps: a file, or a directory
//	                                of <Family>.json; FILE is the keyspace's
//	                                JSON schema (supercol.KeyspaceDef)
//
// Targets (--to):
//
//	cql://host:port[,host:port]/keyspace   a Cassandra or ScyllaDB cluster (gocql)
//	file:OUT.cql                           a script cqlsh runs as is (cqlsh -f OUT.cql)
//
// Each family is mapped after sampling its first rows (--shape
// Family=compact|pivot|static overrides the choice). --ttl remaining (the
// default) writes each TTL'd cell with the time it has left and drops the
// cells already expired; original restarts the original TTL; none drops
// TTLs; a number of seconds sets that TTL on every cell. Counters carry
// neither TTL nor writetime.
//
// schema and data record the converted keyspace in thriftd's catalog, so
// that thriftd --backend cql:// serves it as the legacy keyspace it came
// from: once the data is written, the keyspace and each family's legacy
// definition and table shape go into the metadata keyspace
// (--meta-keyspace, default thriftbridge_meta; thriftd's
// cql_meta_keyspace) of a cql: target, or as INSERTs at the end of a file:
// script. --no-metadata leaves them out. docs/CQL-BACKEND.md ("Converted
// tables") says how thriftd serves each shape.
//
// --checkpoint FILE makes data resumable: the run records its progress
// after the target acknowledged it, and a new run with the same flags
// continues from there. A file target is cut back to the checkpointed
// length first, so that the finished script is the one an uninterrupted
// run writes; a cluster target probes counter cells so that no increment
// is applied twice.
//
// --now UNIX_SECONDS|RFC3339 (plan, data, verify) runs as of that instant
// instead of the real clock: it decides which cells have expired (in a
// badger: or json: source too), the remaining TTLs and the script's
// header, so that a conversion is reproducible.
//
// A wrong command line prints the usage and exits with status 2; a command
// whose work fails says why and exits with status 1. verify answers as diff
// does: status 1 when a cell is missing, extra or different (value,
// writetime, or TTL beyond --tolerance), status 2 when it could not compare.
//
// convert fixtures, without --out or --load (or with --check), is the
// self-check of the conversion: for every fixture model (or --name) it
// starts thriftd in-process over a temporary Badger store, loads the model
// over Thrift, converts it from the live server, from the Badger directory
// and from sstable2json dumps, each with every shape that has an expected
// script, and compares each script byte for byte with the expected one
// (fixtures/<model>/expected/). It prints one OK/FAIL line per model and
// source, a failure with its first differing line, and exits with status
// 1 on any difference.
package main
