// Package thriftsource reads a legacy keyspace from a live Cassandra
// (1.2 to 3.11) or thriftd over the Thrift RPC API (framed transport, binary
// protocol), paging rows by token and each row's columns by slice so that a
// wide row never sits in memory. LoadFixture writes a fixtures model into a
// server through the same API.
package thriftsource
