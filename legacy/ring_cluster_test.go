package legacy_test

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// addKeyspace creates a legacy keyspace with one Standard family through
// the Thrift API and drops it when t ends.
func addKeyspace(t *testing.T, c *conformance.Client, ks string) {
	t.Helper()
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name, cf.ComparatorType = ks, "Standard1", "BytesType"
	def := cassandra.NewKsDef()
	def.Name, def.StrategyClass, def.CfDefs = ks, "org.apache.cassandra.locator.SimpleStrategy", []*cassandra.CfDef{cf}
	def.StrategyOptions = map[string]string{"replication_factor": "1"}
	if _, err := c.SystemAddKeyspace(callCtx(t), def); err != nil {
		t.Fatalf("%s: system_add_keyspace %s: %v", c.Addr, ks, testcluster.Explain(err))
	}
	t.Cleanup(func() {
		if _, err := conformance.Dial(t, c.Addr).SystemDropKeyspace(callCtx(t), ks); err != nil {
			t.Errorf("%s: drop %s: %v", c.Addr, ks, err)
		}
	})
	if err := c.SetKeyspace(callCtx(t), ks); err != nil {
		t.Fatal(err)
	}
}

// describeNode is what the describe calls answer about the ring.
type describeNode struct {
	ring, localRing []*cassandra.TokenRange
	tokenMap        map[string]string
	partitioner     string
	// versions are the endpoints of each schema version, the versions
	// themselves being each server's own.
	versions [][]string
}

func describe(t *testing.T, c *conformance.Client, ks string) describeNode {
	t.Helper()
	var d describeNode
	var err error
	if d.ring, err = c.DescribeRing(callCtx(t), ks); err != nil {
		t.Fatalf("%s: describe_ring: %v", c.Addr, err)
	}
	if d.localRing, err = c.DescribeLocalRing(callCtx(t), ks); err != nil {
		t.Fatalf("%s: describe_local_ring: %v", c.Addr, err)
	}
	if d.tokenMap, err = c.DescribeTokenMap(callCtx(t)); err != nil {
		t.Fatalf("%s: describe_token_map: %v", c.Addr, err)
	}
	if d.partitioner, err = c.DescribePartitioner(callCtx(t)); err != nil {
		t.Fatalf("%s: describe_partitioner: %v", c.Addr, err)
	}
	versions, err := c.DescribeSchemaVersions(callCtx(t))
	if err != nil {
		t.Fatalf("%s: describe_schema_versions: %v", c.Addr, err)
	}
	for _, eps := range versions {
		d.versions = append(d.versions, eps)
	}
	return d
}

// TestClusterRingOneInstance: one thriftd over Cassandra 5.0 describes
// the cluster's token ranges with itself as every range's endpoint, as
// Cassandra 3.11 describes its own ring (both test nodes have one token,
// 0): the answers are compared field by field.
func TestClusterRingOneInstance(t *testing.T) {
	td := startClusterThriftd(t, legacy.HandlerConfig{})
	c := dial(t, td.addr)
	ks := testcluster.Keyspace("tb_ring")
	addKeyspace(t, c, ks)
	got := describe(t, c, ks)
	if len(got.ring) == 0 {
		t.Fatal("describe_ring: no range")
	}
	for _, r := range got.ring {
		if !reflect.DeepEqual(r.Endpoints, []string{"127.0.0.1"}) || !reflect.DeepEqual(r.RPCEndpoints, []string{"127.0.0.1"}) {
			t.Errorf("range (%s, %s]: endpoints %v, rpc endpoints %v; want thriftd's own address", r.StartToken, r.EndToken, r.Endpoints, r.RPCEndpoints)
		}
	}
	if !reflect.DeepEqual(got.versions, [][]string{{"127.0.0.1"}}) {
		t.Errorf("describe_schema_versions endpoints %v, want one version on 127.0.0.1", got.versions)
	}
	if _, err := c.DescribeRing(callCtx(t), "system"); err == nil {
		t.Error("describe_ring of system: no error, want InvalidRequestException as Cassandra")
	}
	ref := referenceThrift(t)
	if ref == "" {
		return
	}
	rc := dial(t, ref)
	refKs := testcluster.Keyspace("tb_ring")
	addKeyspace(t, rc, refKs)
	want := describe(t, rc, refKs)
	compare := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s differs:\n thriftd:        %s\n Cassandra 3.11: %s", what, ringString(got), ringString(want))
		}
	}
	compare("describe_ring", got.ring, want.ring)
	compare("describe_local_ring", got.localRing, want.localRing)
	compare("describe_token_map", got.tokenMap, want.tokenMap)
	compare("describe_partitioner", got.partitioner, want.partitioner)
	compare("describe_schema_versions' endpoints", got.versions, want.versions)
	// The replicated system keyspaces have a ring, the local ones none:
	// Hector's node discovery describes the ring of the first keyspace
	// other than system that describe_keyspaces lists.
	for _, sys := range []string{"system", "system_auth", "system_distributed", "system_schema", "system_traces"} {
		gotRing, gotErr := c.DescribeRing(callCtx(t), sys)
		wantRing, wantErr := rc.DescribeRing(callCtx(t), sys)
		compare("describe_ring of "+sys, ringString(gotRing)+" "+exceptionOf(gotErr), ringString(wantRing)+" "+exceptionOf(wantErr))
	}
}

// TestClusterRingPeers: with --advertise and --peers, every range lists
// every instance, sorted and rotated one step per range; bare hosts when
// the instances share a port, host:port when they do not.
func TestClusterRingPeers(t *testing.T) {
	for _, c := range []struct {
		name      string
		ring      legacy.RingConfig
		instances []string
	}{
		{"one port", legacy.RingConfig{Advertise: "10.9.0.2:9160", Peers: []string{"10.9.0.3:9160", "10.9.0.1:9160"}},
			[]string{"10.9.0.1", "10.9.0.2", "10.9.0.3"}},
		{"several ports", legacy.RingConfig{Advertise: "127.0.0.1:9161", Peers: []string{"127.0.0.1:9160"}},
			[]string{"127.0.0.1:9160", "127.0.0.1:9161"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			td := startClusterThriftd(t, legacy.HandlerConfig{Ring: c.ring})
			client := dial(t, td.addr)
			ks := testcluster.Keyspace("tb_peers")
			addKeyspace(t, client, ks)
			d := describe(t, client, ks)
			for i, r := range d.ring {
				want := append(append([]string{}, c.instances[i%len(c.instances):]...), c.instances[:i%len(c.instances)]...)
				if !reflect.DeepEqual(r.Endpoints, want) || !reflect.DeepEqual(r.RPCEndpoints, want) {
					t.Errorf("range %d (%s, %s]: endpoints %v, rpc %v, want %v", i, r.StartToken, r.EndToken, r.Endpoints, r.RPCEndpoints, want)
				}
				for j, det := range r.EndpointDetails {
					if det.Host != want[j] || det.Datacenter == "" || det.Rack == nil || *det.Rack == "" {
						t.Errorf("range %d: endpoint details %d: %+v", i, j, det)
					}
				}
				if got := d.tokenMap[r.EndToken]; got != want[0] {
					t.Errorf("describe_token_map[%s] = %q, want %q", r.EndToken, got, want[0])
				}
			}
			if !reflect.DeepEqual(d.versions, [][]string{c.instances}) {
				t.Errorf("describe_schema_versions endpoints %v, want %v", d.versions, c.instances)
			}
		})
	}
}

func ringString(v any) string {
	ranges, ok := v.([]*cassandra.TokenRange)
	if !ok {
		return fmt.Sprintf("%v", v)
	}
	var parts []string
	for _, r := range ranges {
		var details []string
		for _, d := range r.EndpointDetails {
			rack := "<nil>"
			if d.Rack != nil {
				rack = *d.Rack
			}
			details = append(details, d.Host+"/"+d.Datacenter+"/"+rack)
		}
		parts = append(parts, fmt.Sprintf("(%s, %s] %v rpc %v %v", r.StartToken, r.EndToken, r.Endpoints, r.RPCEndpoints, details))
	}
	return strings.Join(parts, "; ")
}

// freePorts reserves n free loopback ports and releases them for the
// caller to listen on.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		defer ln.Close()
	}
	return addrs
}

// TestClusterRingTwoInstances: two thriftd instances over one cluster,
// each advertising itself with the other as peer, describe the same ring;
// a client that follows its endpoints (as Astyanax does, host:port since
// the ports differ) reaches both and reads through either what it wrote
// through one.
func TestClusterRingTwoInstances(t *testing.T) {
	targetHosts(t)
	meta := testcluster.Keyspace("tb_meta2")
	dropWhenDone(t, meta)
	addrs := freePorts(t, 2)
	var instances []*clusterThriftd
	for i, addr := range addrs {
		cfg := legacy.HandlerConfig{Ring: legacy.RingConfig{Advertise: addr, Peers: []string{addrs[1-i]}}}
		instances = append(instances, startClusterThriftdOn(t, cfg, meta, addr))
	}
	a := dial(t, addrs[0])
	ks := testcluster.Keyspace("tb_two")
	addKeyspace(t, a, ks)
	ts := int64(7)
	if err := a.Insert(callCtx(t), []byte("k"), &cassandra.ColumnParent{ColumnFamily: "Standard1"},
		&cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE); err != nil {
		t.Fatal(err)
	}
	// The second instance reloads its catalog (every 10 s in thriftd).
	if err := instances[1].engine.Refresh(callCtx(t)); err != nil {
		t.Fatal(err)
	}
	ringA, err := a.DescribeRing(callCtx(t), ks)
	if err != nil {
		t.Fatal(err)
	}
	ringB, err := dial(t, addrs[1]).DescribeRing(callCtx(t), ks)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ringA, ringB) {
		t.Errorf("the instances describe different rings:\n %s\n %s", ringString(ringA), ringString(ringB))
	}
	sorted := append([]string{}, addrs...)
	slices.Sort(sorted)
	if len(ringA) == 0 || !reflect.DeepEqual(ringA[0].Endpoints, sorted) {
		t.Fatalf("ring %s, want every range to list %v", ringString(ringA), sorted)
	}
	for _, ep := range ringA[0].Endpoints {
		c := dial(t, ep)
		if err := c.SetKeyspace(callCtx(t), ks); err != nil {
			t.Fatalf("%s: set_keyspace: %v", ep, err)
		}
		got, err := c.Get(callCtx(t), []byte("k"), &cassandra.ColumnPath{ColumnFamily: "Standard1", Column: []byte("c")}, cassandra.ConsistencyLevel_ONE)
		if err != nil || string(got.Column.Value) != "v" || got.Column.GetTimestamp() != 7 {
			t.Errorf("%s: get: %v, %v", ep, got, err)
		}
	}
}
