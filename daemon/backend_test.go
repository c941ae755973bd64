package daemon

import (
	"slices"
	"strings"
	"testing"
)

func TestBackendSpec(t *testing.T) {
	cases := []struct {
		backend string
		want    Backend
	}{
		{"", Backend{Kind: BackendBadger, Dir: "./data"}},
		{"badger:/var/lib/thriftd", Backend{Kind: BackendBadger, Dir: "/var/lib/thriftd"}},
		{"cql://127.0.0.1:9042", Backend{Kind: BackendCQL, Hosts: []string{"127.0.0.1:9042"}}},
		{"cql://db1,db2:19042/", Backend{Kind: BackendCQL, Hosts: []string{"db1:9042", "db2:19042"}}},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.Backend = c.backend
		got, err := cfg.BackendSpec()
		if err != nil || got.Kind != c.want.Kind || got.Dir != c.want.Dir || !slices.Equal(got.Hosts, c.want.Hosts) {
			t.Errorf("backend %q: %+v, %v; want %+v", c.backend, got, err, c.want)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("backend %q: %v", c.backend, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Backend = "badger:/srv/thriftd"
	if got := cfg.StoreDir(); got != "/srv/thriftd" {
		t.Errorf("the store directory of badger:/srv/thriftd is %q", got)
	}
}

func TestBackendInvalid(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Config)
		says   string
	}{
		{"unknown scheme", func(c *Config) { c.Backend = "postgres://db" }, `invalid backend (--backend) "postgres://db": must be badger:DIR or cql://host:port`},
		{"badger without a directory", func(c *Config) { c.Backend = "badger:" }, "badger: needs a directory"},
		{"cql without hosts", func(c *Config) { c.Backend = "cql://" }, "needs the cluster's contact points"},
		{"cql with a keyspace", func(c *Config) { c.Backend = "cql://db1:9042/Blog" }, "takes no keyspace"},
		{"cql with a bad port", func(c *Config) { c.Backend = "cql://db1:port" }, `"db1:port" is not host or host:port`},
		{"unknown level", func(c *Config) { c.Backend = "cql://db1"; c.CQLConsistency = "MOST" }, `invalid cql_consistency (--cql-consistency) "MOST": must be a consistency level`},
		{"serial level", func(c *Config) { c.Backend = "cql://db1"; c.CQLConsistency = "serial" }, "SERIAL cannot be the level of every read and write"},
		{"order-preserving partitioner", func(c *Config) { c.Backend = "cql://db1"; c.Partitioner = "OrderPreservingPartitioner" }, "serves clusters of Murmur3Partitioner, RandomPartitioner and ByteOrderedPartitioner"},
		{"password without user", func(c *Config) { c.Backend = "cql://db1"; c.CQLPassword = "pw" }, "password and no user name"},
		{"missing credentials file", func(c *Config) { c.Backend = "cql://db1"; c.CQLCredentials = "/no/such/creds.yaml" }, "no such file"},
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

// TestBackendFromFileAndFlags: the config file's backend keys, and a flag
// that overrides one.
func TestBackendFromFileAndFlags(t *testing.T) {
	creds := writeConfigFile(t, "username: app\npassword: s3cret\n")
	path := writeConfigFile(t, "backend: cql://127.0.0.1:29042\ncql_consistency: LOCAL_QUORUM\ncql_keyspace_prefix: legacy_\ncql_local_dc: dc1\ncql_credentials: "+creds+"\n")
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Backend != "cql://127.0.0.1:29042" || cfg.CQLConsistency != "LOCAL_QUORUM" || cfg.CQLKeyspacePrefix != "legacy_" || cfg.CQLLocalDC != "dc1" {
		t.Errorf("loaded %+v", cfg)
	}
	cfg.CQLUsername = "other"
	s, err := cfg.cqlSettings()
	if err != nil || s.Username != "other" || s.Password != "s3cret" {
		t.Errorf("the settings of the credentials file under a flag's: %+v, %v", s, err)
	}
}
