// Package cqlconn opens sessions to a Cassandra or ScyllaDB cluster the
// same way for every command that talks CQL (convert's cql: target,
// thriftd's cql backend): contact points, login through
// PasswordAuthenticator, TLS, a local data center routed to token-aware,
// and errors that say what went wrong in plain words.
//
// Settings are the login and TLS of a connection as a user gives them
// (flags, or the YAML of a credentials file, whose field names they
// carry); Config is what NewSession needs, TLS built.
package cqlconn
