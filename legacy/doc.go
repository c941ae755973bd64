// Package legacy implements Cassandra's legacy Thrift API (cassandra.thrift,
// API 19.39.0) on top of the storage engine: the Thrift API semantics (the
// cassandra.Cassandra handler), per-connection sessions (login, current
// keyspace, flags), request validation, the mapping of errors to Thrift
// exceptions, and the network server (framed transport, binary protocol,
// frame size limits, graceful shutdown).
//
// Every method of the IDL is answered: what is not implemented yet answers
// an InvalidRequestException that says so (see Unsupported), never a hang
// or a dropped connection.
package legacy
