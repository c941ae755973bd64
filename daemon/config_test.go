package daemon

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/legacy"
)

func writeConfigFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "thriftd.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("defaults are invalid: %v", err)
	}
	want := Config{
		Listen: "127.0.0.1:9160", DataDir: "./data", Partitioner: "Murmur3Partitioner",
		ClusterName: "Test Cluster", CommitlogSync: "periodic", CommitlogSyncPeriodMS: 10000,
		APIVersion: "19.39.0", MaxFrameMB: 15, Snitch: "org.apache.cassandra.locator.SimpleSnitch",
		Authenticator: "AllowAllAuthenticator", MemoryMB: 256,
	}
	// Production hardening: Cassandra's request timeouts.
	want.ReadRequestTimeoutMS, want.RangeRequestTimeoutMS, want.WriteRequestTimeoutMS = 5000, 10000, 2000
	if cfg != want {
		t.Errorf("defaults %+v, want %+v", cfg, want)
	}
	if cfg.Server() != (legacy.ServerConfig{Listen: "127.0.0.1:9160", MaxFrameMB: 15,
		RequestTimeouts: legacy.RequestTimeouts{Read: 5 * time.Second, Range: 10 * time.Second, Write: 2 * time.Second}}) || cfg.CommitlogSyncPeriod().Seconds() != 10 {
		t.Errorf("derived values: %+v, %v", cfg.Server(), cfg.CommitlogSyncPeriod())
	}
	if p, err := cfg.PartitionerImpl(); err != nil || p.Name() != "org.apache.cassandra.dht.Murmur3Partitioner" {
		t.Errorf("partitioner: %v, %v", p, err)
	}
}

func TestLoadConfig(t *testing.T) {
	path := writeConfigFile(t, `
listen: 0.0.0.0:19160
data_dir: /var/lib/thriftd
partitioner: org.apache.cassandra.dht.RandomPartitioner
cluster_name: Legacy
commitlog_sync: batch
commitlog_sync_period_ms: 50
memory_mb: 512
api_version: 19.36.2
max_frame_mb: 64
snitch: GossipingPropertyFileSnitch
initial_token: "85070591730234615865843651857942052864"
authenticator: org.apache.cassandra.auth.PasswordAuthenticator
`)
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Listen: "0.0.0.0:19160", DataDir: "/var/lib/thriftd", Partitioner: "org.apache.cassandra.dht.RandomPartitioner",
		ClusterName: "Legacy", CommitlogSync: "batch", CommitlogSyncPeriodMS: 50, APIVersion: "19.36.2",
		MaxFrameMB: 64, Snitch: "GossipingPropertyFileSnitch", InitialToken: "85070591730234615865843651857942052864",
		Authenticator: "org.apache.cassandra.auth.PasswordAuthenticator", MemoryMB: 512,
	}
	// Production hardening: the file keeps the defaults.
	want.ReadRequestTimeoutMS, want.RangeRequestTimeoutMS, want.WriteRequestTimeoutMS = DefaultReadRequestTimeoutMS, DefaultRangeRequestTimeoutMS, DefaultWriteRequestTimeoutMS
	if cfg != want {
		t.Errorf("loaded %+v\nwant   %+v", cfg, want)
	}
	if got := cfg.SnitchClass(); got != "org.apache.cassandra.locator.GossipingPropertyFileSnitch" {
		t.Errorf("SnitchClass = %s", got)
	}
}

func TestLoadConfigPartialAndEmpty(t *testing.T) {
	cfg, err := LoadConfig(writeConfigFile(t, "cluster_name: Only This\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.ClusterName = "Only This"
	if cfg != want {
		t.Errorf("partial file: %+v", cfg)
	}
	for _, content := range []string{"", "# only a comment\n", "---\n"} {
		cfg, err := LoadConfig(writeConfigFile(t, content))
		if err != nil || cfg != DefaultConfig() {
			t.Errorf("file %q: %+v, %v; want the defaults", content, cfg, err)
		}
	}
}

// TestExampleConfigFile keeps cmd/thriftd/thriftd.example.yaml complete and
// equal to the defaults.
func TestExampleConfigFile(t *testing.T) {
	path := golden.Path(t, "cmd", "thriftd", "thriftd.example.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the example config is missing: %v", err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg != DefaultConfig() {
		t.Errorf("the example differs from the defaults: %+v", cfg)
	}
	for _, s := range settings {
		shown := "\n" + s.key + ":"
		if s.nestedFlag() { // a field of a mapping, indented
			shown = "\n  " + s.key[strings.LastIndex(s.key, ".")+1:] + ":"
		}
		if !strings.Contains(string(data), shown) {
			t.Errorf("the example does not show key %s", s.key)
		}
		if s.flag != "" && !strings.Contains(string(data), "--"+s.flag) {
			t.Errorf("the example does not mention flag --%s", s.flag)
		}
	}
}

func TestLoadConfigUnknownKey(t *testing.T) {
	path := writeConfigFile(t, "listen: 127.0.0.1:9160\nrpc_port: 9160\n")
	_, err := LoadConfig(path)
	if err == nil {
		t.Fatal("an unknown key was accepted")
	}
	for _, want := range []string{path, `"rpc_port"`, ":2:", "known keys: listen"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestLoadConfigInvalid(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"commitlog_sync: sometimes\n", `invalid commitlog_sync (--commitlog-sync) "sometimes": must be periodic or batch`},
		{"partitioner: LocalPartitioner\n", `invalid partitioner (--partitioner) "LocalPartitioner"`},
		{"listen: localhost\n", `invalid listen (--listen) "localhost"`},
		{"listen: 127.0.0.1:70000\n", "port must be a number from 0 to 65535"},
		{"data_dir: ''\n", "invalid data_dir"},
		{"cluster_name: ' '\n", "invalid cluster_name"},
		{"commitlog_sync_period_ms: 0\n", "invalid commitlog_sync_period_ms"},
		{"api_version: nineteen\n", "invalid api_version"},
		{"max_frame_mb: 0\n", "must be between 1 and 2047"},
		{"memory_mb: 32\n", `invalid memory_mb (--memory) "32": must be between 64 and 1048576`},
		{"max_frame_mb: 4096\n", "must be between 1 and 2047"},
		{"max_frame_mb: lots\n", "max_frame_mb must be an integer"},
		{"max_frame_mb: 1.5\n", "max_frame_mb must be an integer"},
		{"commitlog_sync_period_ms: '100'\n", "must be an integer"},
		{"cluster_name: [a, b]\n", "cannot unmarshal"},
		{"snitch: 'Simple Snitch'\n", "invalid snitch"},
		{"initial_token: abc\n", `invalid initial_token (--initial-token) "abc"`},
		{"partitioner: ByteOrderedPartitioner\ninitial_token: abc\n", "even number of hex digits"},
		{"- listen\n", "expected a mapping"},
		{"listen: [1\n", "yaml:"},
		{"listen: a\nlisten: b\n", "already defined"},
	}
	for _, c := range cases {
		path := writeConfigFile(t, c.yaml)
		_, err := LoadConfig(path)
		if err == nil {
			t.Errorf("%q was accepted", c.yaml)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: error %q does not name the file and contain %q", c.yaml, err, c.want)
		}
	}
	// Every problem is reported at once.
	_, err := LoadConfig(writeConfigFile(t, "commitlog_sync: x\nmax_frame_mb: 0\n"))
	if err == nil || !strings.Contains(err.Error(), "commitlog_sync") || !strings.Contains(err.Error(), "max_frame_mb") {
		t.Errorf("two invalid keys: %v", err)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func parseFlags(t *testing.T, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("thriftd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var values Config
	flags := RegisterFlags(fs, &values)
	if values != DefaultConfig() {
		t.Fatalf("flag values do not start at the defaults: %+v", values)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return flags, nil
}

func TestFlagsOverrideFile(t *testing.T) {
	path := writeConfigFile(t, "listen: 0.0.0.0:9999\ncluster_name: From File\nmax_frame_mb: 20\ncommitlog_sync_period_ms: 123\n")
	flags, err := parseFlags(t, "--config", path, "--cluster-name", "From Flag", "--max-frame-mb=3",
		"--partitioner", "ByteOrderedPartitioner", "--initial-token", "00ff")
	if err != nil {
		t.Fatal(err)
	}
	if flags.ConfigPath() != path {
		t.Errorf("ConfigPath = %q", flags.ConfigPath())
	}
	if got, want := flags.Set(), []string{"partitioner", "cluster_name", "max_frame_mb", "initial_token"}; !slices.Equal(got, want) {
		t.Errorf("Set() = %v, want %v", got, want)
	}
	cfg, err := flags.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen = "0.0.0.0:9999"                // file, no flag given
	want.CommitlogSyncPeriodMS = 123            // file only
	want.ClusterName = "From Flag"              // flag wins
	want.MaxFrameMB = 3                         // flag wins
	want.Partitioner = "ByteOrderedPartitioner" // flag
	want.InitialToken = "00ff"                  // flag
	if cfg != want {
		t.Errorf("resolved %+v\nwant     %+v", cfg, want)
	}
}

func TestFlagsWithoutConfigFile(t *testing.T) {
	flags, err := parseFlags(t, "--listen", "127.0.0.1:0", "--data-dir", "/tmp/d", "--commitlog-sync", "batch",
		"--api-version", "19.30.0", "--snitch", "RackInferringSnitch")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := flags.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen, want.DataDir, want.CommitlogSync, want.APIVersion, want.Snitch =
		"127.0.0.1:0", "/tmp/d", "batch", "19.30.0", "RackInferringSnitch"
	if cfg != want {
		t.Errorf("resolved %+v", cfg)
	}
	dst := DefaultConfig()
	dst.ClusterName = "kept"
	flags.ApplyTo(&dst)
	if dst.ClusterName != "kept" || dst.Listen != "127.0.0.1:0" {
		t.Errorf("ApplyTo overwrote an unset setting or missed a set one: %+v", dst)
	}
}

func TestFlagErrors(t *testing.T) {
	flags, err := parseFlags(t, "--max-frame-mb", "0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flags.Resolve(); err == nil || !strings.Contains(err.Error(), "--max-frame-mb") {
		t.Errorf("invalid flag value: %v", err)
	}
	if _, err := parseFlags(t, "--max-frame-mb", "many"); err == nil {
		t.Error("a non-numeric --max-frame-mb parsed")
	}
	if _, err := parseFlags(t, "--commitlog-sync-period-ms", "5"); err == nil {
		t.Error("commitlog_sync_period_ms has no flag, yet one parsed")
	}
	path := writeConfigFile(t, "bogus: 1\n")
	flags, err = parseFlags(t, "--config", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := flags.Resolve(); err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), path) {
		t.Errorf("unknown key through --config: %v", err)
	}
}
