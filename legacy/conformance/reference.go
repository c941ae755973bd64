package conformance

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// ReferenceNode is a running Cassandra node (3.11, the last version with
// Thrift) that the suite can be run against.
type ReferenceNode struct {
	// Addr is the node's Thrift host:port.
	Addr string
	// Partitioner is the node's partitioner, short class name.
	Partitioner string
	// ClusterName is the node's cluster_name.
	ClusterName string
}

// ReferenceTarget runs each test on the first of nodes whose partitioner and
// cluster name fit the test's Options, one test at a time per node. A real
// node cannot be started afresh per test, so each test drops, when it ends,
// the keyspaces it created (of the names the suite uses, so that other
// clients of the node keep theirs): the next test finds the node as empty as
// a new thriftd. A test no node fits is skipped loudly.
func ReferenceTarget(nodes ...ReferenceNode) Target {
	swept := make([]sync.Once, len(nodes))
	// One test at a time per node: the suite's tests share keyspace names,
	// and a parallel test must wait for the node instead.
	free := make([]chan struct{}, len(nodes))
	for i := range free {
		free[i] = make(chan struct{}, 1)
		free[i] <- struct{}{}
	}
	return Target{Cassandra: true, Start: func(t testing.TB, opts Options) string {
		t.Helper()
		partitioner := opts.Partitioner
		if partitioner == "" {
			partitioner = "Murmur3Partitioner"
		}
		var node *ReferenceNode
		var index int
		for i := range nodes {
			n := &nodes[i]
			if n.Partitioner == partitioner && clusterNameFits(opts.ClusterName, n.ClusterName) {
				node, index = n, i
				break
			}
		}
		if node == nil {
			t.Skipf("!!! SKIPPED: no reference node runs %s with cluster name %q !!!", partitioner, opts.ClusterName)
		}
		select {
		case <-free[index]:
		case <-time.After(nodeWait):
			t.Fatalf("reference node %s: still busy with another test after %v", node.Addr, nodeWait)
		}
		t.Cleanup(func() { free[index] <- struct{}{} })
		swept[index].Do(func() {
			if err := dropSuiteLeftovers(t, node.Addr); err != nil {
				t.Fatalf("reference node %s: %v", node.Addr, err)
			}
		})
		before, err := nodeKeyspaces(t, node.Addr)
		if err != nil {
			t.Fatalf("reference node %s: %v", node.Addr, err)
		}
		t.Cleanup(func() {
			if err := dropNewKeyspaces(t, node.Addr, before); err != nil {
				t.Errorf("reference node %s: %v", node.Addr, err)
			}
		})
		return node.Addr
	}}
}

// nodeWait bounds how long a test waits for its node.
const nodeWait = 5 * time.Minute

// clusterNameFits reports whether a node named have serves a test that asked
// for want. Only the dtest cases look at the name ("test"); the vector
// files name their cluster for the logs only.
func clusterNameFits(want, have string) bool {
	return want == "" || want == "vectors" || want == have
}

// nodeKeyspaces lists the keyspaces of the node at addr.
func nodeKeyspaces(t testing.TB, addr string) (map[string]bool, error) {
	c := Dial(t, addr)
	defer func() { _ = c.transport.Close() }()
	kss, err := c.DescribeKeyspaces(Ctx(t))
	if err != nil {
		return nil, fmt.Errorf("describe_keyspaces: %w", err)
	}
	names := make(map[string]bool, len(kss))
	for _, ks := range kss {
		names[ks.Name] = true
	}
	return names, nil
}

// suiteKeyspaces are the keyspace names the suite creates. A run stopped
// half-way (a timeout, a kill) leaves some behind; the first test on a node
// drops them.
var suiteKeyspaces = []string{
	"Keyspace1", "Keyspace2", "Blog", "CreateKeyspace", "CreateKsCf", "Other",
	"Recreate", "ValidKs", "vec_comp", "vec_order", "vec_super", "vec_valid",
}

func dropSuiteLeftovers(t testing.TB, addr string) error {
	now, err := nodeKeyspaces(t, addr)
	if err != nil {
		return err
	}
	c := Dial(t, addr)
	defer func() { _ = c.transport.Close() }()
	for name := range now {
		if !isSuiteKeyspace(name) {
			continue
		}
		if _, err := c.SystemDropKeyspace(Ctx(t), name); err != nil {
			return fmt.Errorf("system_drop_keyspace %s: %w", name, err)
		}
	}
	return nil
}

// dropNewKeyspaces drops every keyspace of the node at addr that is not in
// before.
func dropNewKeyspaces(t testing.TB, addr string, before map[string]bool) error {
	now, err := nodeKeyspaces(t, addr)
	if err != nil {
		return err
	}
	c := Dial(t, addr)
	defer func() { _ = c.transport.Close() }()
	for name := range now {
		if before[name] {
			continue
		}
		if !isSuiteKeyspace(name) {
			// Another client of the node made it meanwhile.
			continue
		}
		if _, err := c.SystemDropKeyspace(Ctx(t), name); err != nil {
			return fmt.Errorf("system_drop_keyspace %s: %w", name, err)
		}
	}
	return nil
}

func isSuiteKeyspace(name string) bool {
	for _, ours := range suiteKeyspaces {
		if strings.EqualFold(name, ours) {
			return true
		}
	}
	return false
}
