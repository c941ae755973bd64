// Package thrift holds cassandra.thrift, the IDL of Cassandra's legacy RPC
// interface (wire-compatible with API 19.39.0 and 20.1.0), and the Go code
// generated from it in gen-go/cassandra. Run `make thrift` to regenerate.
package thrift
