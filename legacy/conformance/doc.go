// Package conformance is a backend-neutral test suite of Cassandra's Thrift
// API. It talks to a server only over TCP, with the Go client generated from
// thrift/cassandra.thrift, so any server that speaks the API (thriftd on its
// embedded store, or another backend) runs the same tests: a backend provides
// a Target that starts a fresh server and returns its address, and calls Run.
//
// The suite holds per-method tests on Standard and Super families and the
// golden vectors observed on a real Cassandra 3.11.9, kept in
// testdata/cassandra-3.11 at the module root.
package conformance
