// Package thriftsource reads a legacy keyspace from a live Cassandra
// (1.2 to 3.11) or thriftd over the Thrift RPC API (framed transport, binary
// protocol), paging rows by token and each row's columns by slice so that a
// wide row never sits in memory. It logs in (login, for
// PasswordAuthenticator) and speaks TLS when asked to.
//
// The schema comes from describe_keyspace, with what Cassandra 2.0 to 3.11
// describe differently from thriftd undone (3.x's internal columns of a
// Super family, declared columns in an order of their own, key_alias
// "key") and, from Cassandra's CQL schema read through execute_cql3_query,
// the names of the columns of tables created through CQL WITH COMPACT
// STORAGE, which Thrift no longer describes. CQL tables without COMPACT
// STORAGE are invisible to Thrift: UnlistedTables names them.
//
// Call runs other calls over a connection set up the same way (login,
// TLS); fixtures.Model.WriteThrift loads a fixture model through it.
package thriftsource
