package daemon

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/thriftbridge/thriftbridge/legacy"
)

// RingConfig is where thriftd over a CQL cluster sends clients that
// discover nodes through describe_ring (Hector's auto-discovery,
// Astyanax's RING_DESCRIBE, Hadoop's input formats): the cluster's nodes
// speak no Thrift, so the ring lists thriftd instances instead.
type RingConfig struct {
	// Advertise is this instance's host:port as clients reach it; empty:
	// the address each client connected to (the listen address, or the
	// interface a client came through when listening on 0.0.0.0).
	Advertise string `yaml:"advertise"`
	// Peers are the other thriftd instances serving the same cluster,
	// host:port separated by commas (as cassandra.yaml lists its seeds).
	Peers string `yaml:"peers"`
}

// The ring's settings, in the settings table.
var (
	advertiseSetting = setting{key: "advertise", flag: "advertise",
		usage: "host:port clients are told to connect to in describe_ring, with a cql:// backend (default: the address each client connected to)",
		str:   func(c *Config) *string { return &c.Advertise }}
	peersSetting = setting{key: "peers", flag: "peers",
		usage: "the other thriftd instances serving the same cql:// backend, host:port,host:port...: describe_ring lists them with this one",
		str:   func(c *Config) *string { return &c.Peers }}
)

// peerList is Peers as a list.
func (r RingConfig) peerList() []string {
	var out []string
	for _, p := range strings.Split(r.Peers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// handlerRing is the ring configuration of the Thrift handler.
func (r RingConfig) handlerRing() legacy.RingConfig {
	return legacy.RingConfig{Advertise: strings.TrimSpace(r.Advertise), Peers: r.peerList()}
}

// ringErrors reports invalid ring settings: each address must be a
// host:port a client can connect to, and they are for a cql:// backend
// only (the embedded store is one node, which the ring describes).
func (c Config) ringErrors() []error {
	var errs []error
	invalid := func(s setting, value, why string) {
		errs = append(errs, fmt.Errorf("invalid %s %q: %s", s.name(), value, why))
	}
	if c.Advertise == "" && c.Peers == "" {
		return nil
	}
	if b, err := c.BackendSpec(); err == nil && b.Kind != BackendCQL {
		if c.Advertise != "" {
			invalid(advertiseSetting, c.Advertise, "only a cql:// backend has a ring of several instances; the embedded store is one node")
		}
		if c.Peers != "" {
			invalid(peersSetting, c.Peers, "only a cql:// backend has a ring of several instances; the embedded store is one node")
		}
		return errs
	}
	if a := strings.TrimSpace(c.Advertise); a != "" {
		if err := checkEndpoint(a); err != nil {
			invalid(advertiseSetting, c.Advertise, err.Error())
		}
	}
	for _, p := range c.RingConfig.peerList() {
		if err := checkEndpoint(p); err != nil {
			invalid(peersSetting, c.Peers, p+": "+err.Error())
		}
	}
	return errs
}

// checkEndpoint checks a host:port clients can connect to.
func checkEndpoint(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, e.g. 10.0.0.1:9160")
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return errors.New("must name a host clients can connect to, not a wildcard")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("the port must be a number from 1 to 65535")
	}
	return nil
}
