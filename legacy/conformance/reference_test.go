package conformance

import (
	"os"
	"testing"
)

// TestReference runs the whole suite against a real Cassandra 3.11 node:
// a test that fails there is a wrong test, or a divergence thriftd makes on
// purpose and that the test asserts as such. CASSANDRA_THRIFT names the
// Murmur3Partitioner node, CASSANDRA_THRIFT_BOP an optional
// ByteOrderedPartitioner node with cluster name "test", CASSANDRA_THRIFT_RP
// an optional RandomPartitioner node (make cassandra starts all three).
func TestReference(t *testing.T) {
	addr := os.Getenv("CASSANDRA_THRIFT")
	if addr == "" {
		t.Skip("!!! SKIPPED: the conformance suite on Cassandra 3.11 needs CASSANDRA_THRIFT (host:9160 of a 3.11 node; make cassandra) !!!")
	}
	nodes := []ReferenceNode{{Addr: addr, Partitioner: "Murmur3Partitioner", ClusterName: "Test Cluster"}}
	if bop := os.Getenv("CASSANDRA_THRIFT_BOP"); bop != "" {
		nodes = append(nodes, ReferenceNode{Addr: bop, Partitioner: "ByteOrderedPartitioner", ClusterName: "test"})
	}
	if rp := os.Getenv("CASSANDRA_THRIFT_RP"); rp != "" {
		nodes = append(nodes, ReferenceNode{Addr: rp, Partitioner: "RandomPartitioner", ClusterName: "Test Cluster"})
	}
	Run(t, ReferenceTarget(nodes...))
}
