// Package testcluster finds the real CQL servers that the cluster-backed
// tests run against and gives them fresh keyspaces:
//
//   - CASSANDRA_HOSTS: Cassandra 3.11, the reference (the last version with
//     Thrift), subtests named "cassandra-3.11";
//   - CASSANDRA_TARGET_HOSTS: Cassandra 5.0, a migration's target,
//     subtests named "cassandra-5.0";
//
// and, for the tests of the partitioners other than Murmur3Partitioner
// (OtherPartitioners):
//
//   - CASSANDRA_HOSTS_BOP: Cassandra 3.11 under ByteOrderedPartitioner;
//   - CASSANDRA_HOSTS_RP: Cassandra 3.11 under RandomPartitioner.
//
// Each is host:port[,host:port...] (port 9042 when left out).
// test/cassandra/cassandra.sh starts both on loopback and prints the
// variables. A test runs against every one that is set and skips loudly
// when neither is.
package testcluster

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// Cluster is one server (or cluster) named by an environment variable.
type Cluster struct {
	// Name is the subtest name: cassandra-3.11 or cassandra-5.0.
	Name string
	// Env is the variable that named it.
	Env string
	// Hosts are its contact points, host:port.
	Hosts []string
}

// URL is the cql:// target of keyspace on the cluster.
func (c Cluster) URL(keyspace string) string {
	return "cql://" + strings.Join(c.Hosts, ",") + "/" + keyspace
}

// vars lists the variables in the order the subtests run.
var vars = []struct{ env, name string }{
	{"CASSANDRA_HOSTS", "cassandra-3.11"},
	{"CASSANDRA_TARGET_HOSTS", "cassandra-5.0"},
}

// partitionerVars name the clusters of other partitioners, by the
// partitioner's short class name.
var partitionerVars = []struct{ env, name, partitioner string }{
	{"CASSANDRA_HOSTS_BOP", "cassandra-3.11-bop", "ByteOrderedPartitioner"},
	{"CASSANDRA_HOSTS_RP", "cassandra-3.11-rp", "RandomPartitioner"},
}

// FromEnv returns the clusters whose variable is set.
func FromEnv() []Cluster {
	var out []Cluster
	for _, v := range vars {
		if c, ok := fromVar(v.env, v.name); ok {
			out = append(out, c)
		}
	}
	return out
}

// OtherPartitioners returns the clusters of partitioners other than
// Murmur3Partitioner whose variable is set, by the partitioner's short
// class name (ByteOrderedPartitioner, RandomPartitioner).
func OtherPartitioners() map[string]Cluster {
	out := map[string]Cluster{}
	for _, v := range partitionerVars {
		if c, ok := fromVar(v.env, v.name); ok {
			out[v.partitioner] = c
		}
	}
	return out
}

// fromVar is the cluster the variable env names, if it is set.
func fromVar(env, name string) (Cluster, bool) {
	s := strings.TrimSpace(os.Getenv(env))
	if s == "" {
		return Cluster{}, false
	}
	c := Cluster{Name: name, Env: env}
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "9042")
		}
		c.Hosts = append(c.Hosts, h)
	}
	return c, true
}

// Require returns the clusters whose variable is set, or skips t loudly:
// what says what needs them.
func Require(t testing.TB, what string) []Cluster {
	t.Helper()
	cs := FromEnv()
	if len(cs) == 0 {
		t.Skipf("!!! SKIPPED: %s needs CASSANDRA_HOSTS (Cassandra 3.11) and/or CASSANDRA_TARGET_HOSTS (Cassandra 5.0), host:9042[,host:9042]; `test/cassandra/cassandra.sh start` prints them !!!", what)
	}
	return cs
}

var serial atomic.Int64

// Keyspace returns a keyspace name no other run uses: prefix (lower case,
// letters, digits and _), then a stamp of the time, this process and
// call: test binaries of several packages share the nodes at once.
// Cassandra takes at most 48 characters; a longer prefix is cut.
func Keyspace(prefix string) string {
	stamp := "_" + strconv.FormatInt(time.Now().UnixNano()/1000, 36) + "_" + strconv.Itoa(os.Getpid()) + "_" + strconv.FormatInt(serial.Add(1), 36)
	if n := 48 - len(stamp); len(prefix) > n {
		prefix = prefix[:n]
	}
	return prefix + stamp
}

// Session opens a session to c (consistency ONE), closed when t ends.
func Session(t testing.TB, c Cluster) *gocql.Session {
	t.Helper()
	cluster := gocql.NewCluster(c.Hosts...)
	cluster.Consistency = gocql.One
	cluster.Timeout = 30 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("%s (%s=%s): %v", c.Name, c.Env, strings.Join(c.Hosts, ","), err)
	}
	t.Cleanup(s.Close)
	return s
}

// DropWhenDone drops the keyspaces through session when t ends (they may
// or may not have been created).
func DropWhenDone(t testing.TB, session *gocql.Session, keyspaces ...string) {
	t.Helper()
	t.Cleanup(func() {
		for _, ks := range keyspaces {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := session.Query(`DROP KEYSPACE IF EXISTS "` + ks + `"`).ExecContext(ctx)
			cancel()
			if err != nil {
				t.Errorf("drop keyspace %s: %v", ks, err)
			}
		}
	})
}

// Explain adds what is known about an error of a test server to err's
// text.
func Explain(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if strings.Contains(s, "can't get field offset on a hidden class") {
		s += "\n(Cassandra 3.11 on Java 15+ cannot prepare most statements unless jamm is loaded as a Java agent: " +
			"start the JVM with -javaagent:<lib>/jamm-0.3.0.jar, as Cassandra's own cassandra-env.sh does)"
	}
	if strings.Contains(s, "unconfigured table") || strings.Contains(s, "does not exist") || strings.Contains(s, "doesn't exist") {
		s += "\n(did another client drop the test's keyspace meanwhile? legacy/conformance's ReferenceTarget " +
			"drops the keyspaces that appear on its node while one of its tests runs)"
	}
	return s
}
