package main

import (
	"testing"

	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
)

// thriftdTarget starts thriftd on a fresh Badger directory on 127.0.0.1:0.
func thriftdTarget(t testing.TB, opts conformance.Options) string {
	t.Helper()
	cfg := daemontest.Config(t)
	if opts.Partitioner != "" {
		cfg.Partitioner = opts.Partitioner
	}
	if opts.ClusterName != "" {
		cfg.ClusterName = opts.ClusterName
	}
	return daemontest.Start(t, cfg)
}

// TestConformance runs the backend-neutral Thrift API suite against thriftd.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Target{Start: thriftdTarget})
}
