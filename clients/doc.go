// Package clients holds checks that drive thriftd with real Thrift-era
// client libraries, unmodified (see the Makefile's check-clients target).
// They need the npm registry, so they are not part of `make test`.
package clients
