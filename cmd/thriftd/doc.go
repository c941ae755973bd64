// Command thriftd serves Cassandra's legacy Thrift API (framed transport,
// binary protocol) over an embedded Badger store.
//
//	thriftd --listen 127.0.0.1:9160 --data-dir ./data
//
// Settings come from the defaults, then the YAML file given with --config
// (see thriftd.example.yaml), then the command-line flags; package daemon
// reads them and runs the server. SIGINT or SIGTERM stops it gracefully:
// no new connections, in-flight calls finish, the store is closed cleanly.
//
//	thriftd user add|passwd|del|grant|revoke|list ... --data-dir ./data
//	thriftd user add|passwd|del|grant|revoke|list ... --backend cql://host:9042
//
// manages the users of --authenticator password and their permissions
// (user.go), whether a thriftd runs on the data directory or not; with a
// cql:// backend, those of the cluster, shared by every thriftd on it.
package main
