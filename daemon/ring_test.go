package daemon

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestRingSettings: advertise and peers from the file, a flag over the
// file, and what the handler is given.
func TestRingSettings(t *testing.T) {
	path := writeConfigFile(t, "backend: cql://127.0.0.1:29042\nadvertise: 10.0.0.1:9160\npeers: \"10.0.0.2:9160, 10.0.0.3:9160\"\n")
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := legacy.RingConfig{Advertise: "10.0.0.1:9160", Peers: []string{"10.0.0.2:9160", "10.0.0.3:9160"}}
	if got := cfg.RingConfig.handlerRing(); !reflect.DeepEqual(got, want) {
		t.Errorf("from the file: %+v, want %+v", got, want)
	}

	fs := flag.NewFlagSet("thriftd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var values Config
	flags := RegisterFlags(fs, &values)
	if err := fs.Parse([]string{"--config", path, "--peers", "10.0.0.9:9160"}); err != nil {
		t.Fatal(err)
	}
	cfg, err = flags.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want.Peers = []string{"10.0.0.9:9160"}
	if got := cfg.RingConfig.handlerRing(); !reflect.DeepEqual(got, want) {
		t.Errorf("--peers over the file: %+v, want %+v", got, want)
	}
}

func TestRingSettingsInvalid(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		says   string
	}{
		{"advertise without a port", func(c *Config) { c.Backend = "cql://db1"; c.Advertise = "10.0.0.1" }, `invalid advertise (--advertise) "10.0.0.1": must be host:port`},
		{"advertise a wildcard", func(c *Config) { c.Backend = "cql://db1"; c.Advertise = "0.0.0.0:9160" }, "not a wildcard"},
		{"a peer's bad port", func(c *Config) { c.Backend = "cql://db1"; c.Peers = "10.0.0.2:9160,10.0.0.3:99999" }, `10.0.0.3:99999: the port must be a number from 1 to 65535`},
		{"peers of the embedded store", func(c *Config) { c.Peers = "10.0.0.2:9160" }, "only a cql:// backend has a ring of several instances"},
		{"advertise of the embedded store", func(c *Config) { c.Advertise = "10.0.0.2:9160" }, "only a cql:// backend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.change(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %v, want one saying %q", err, c.says)
			}
		})
	}
}

// TestRingOfAdvertisedInstances runs thriftd on the Cassandra 5.0 node
// with --advertise and --peers: describe_ring lists those instances, in
// the form Hector and Astyanax read (bare hosts on one port).
func TestRingOfAdvertisedInstances(t *testing.T) {
	hosts := strings.TrimSpace(os.Getenv("CASSANDRA_TARGET_HOSTS"))
	if hosts == "" {
		t.Skip("!!! SKIPPED: thriftd's ring on the CQL backend needs CASSANDRA_TARGET_HOSTS (Cassandra 5.0, host:port); `test/cassandra/cassandra.sh start` prints it !!!")
	}
	prefix := testcluster.Keyspace("tb_adv") + "_"
	cfg := DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.Backend = "cql://" + hosts
	cfg.CQLKeyspacePrefix = prefix
	cfg.CQLMetaKeyspace = prefix + "meta"
	cfg.CQLConsistency = "ONE"
	cfg.Advertise = "10.20.0.2:9160"
	cfg.Peers = "10.20.0.1:9160"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	session := testcluster.Session(t, testcluster.Cluster{Name: "cassandra-5.0", Env: "CASSANDRA_TARGET_HOSTS", Hosts: strings.Split(hosts, ",")})
	testcluster.DropWhenDone(t, session, prefix+"meta", prefix+"Ring")
	d, err := Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	c := conformance.Dial(t, d.Addr().String())
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = "Ring", "Standard1"
	ks := cassandra.NewKsDef()
	ks.Name, ks.StrategyClass, ks.CfDefs = "Ring", "SimpleStrategy", []*cassandra.CfDef{cf}
	ks.StrategyOptions = map[string]string{"replication_factor": "1"}
	if _, err := c.SystemAddKeyspace(conformance.Ctx(t), ks); err != nil {
		t.Fatal(err)
	}
	ring, err := c.DescribeRing(conformance.Ctx(t), "Ring")
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range ring {
		want := []string{"10.20.0.1", "10.20.0.2"}
		if i%2 == 1 {
			want[0], want[1] = want[1], want[0]
		}
		if !reflect.DeepEqual(r.Endpoints, want) || !reflect.DeepEqual(r.RPCEndpoints, want) {
			t.Errorf("range %d (%s, %s]: endpoints %v, rpc %v; want %v", i, r.StartToken, r.EndToken, r.Endpoints, r.RPCEndpoints, want)
		}
	}
}
