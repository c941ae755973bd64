// Package daemon is thriftd as a library: its configuration and the one
// way to run it.
//
// Config holds thriftd's settings. They come from DefaultConfig, then a
// YAML file (LoadConfig; cmd/thriftd/thriftd.example.yaml shows every
// key), then command-line flags (RegisterFlags, Flags.Resolve), and are
// validated with Cassandra's vocabulary: partitioner class names, snitch
// classes, commitlog_sync periodic or batch.
//
// Start opens the Badger store in the data directory with the configured
// partitioner and commit-log sync, wires the legacy Thrift handler to it
// and serves; Stop shuts the server down gracefully and closes the store.
// cmd/thriftd runs thriftd this way, and so does every test or command
// that needs a thriftd in process (convert fixtures, the conformance
// suite, the sources' tests), on 127.0.0.1:0 and, through WithClock, on
// the clock of its data.
//
// Beside the Thrift port a daemon may serve two HTTP endpoints, each off
// unless configured: Prometheus metrics and a health check
// (metrics_listen, metrics.go), and Go's runtime profiles (pprof_listen,
// profiles.go).
package daemon
