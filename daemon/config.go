package daemon

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// Defaults of the thriftd settings (the frame size's are
// legacy.DefaultMaxFrameMB and legacy.MaxFrameMBLimit).
const (
	DefaultListen                = "127.0.0.1:9160"
	DefaultDataDir               = "./data"
	DefaultPartitioner           = "Murmur3Partitioner"
	DefaultClusterName           = "Test Cluster"
	DefaultCommitlogSyncPeriodMS = 10000
	DefaultAPIVersion            = "19.39.0"
	DefaultSnitch                = "org.apache.cassandra.locator.SimpleSnitch"

	// CommitlogSyncPeriodic acknowledges writes at once and syncs them
	// every commitlog_sync_period_ms.
	CommitlogSyncPeriodic = "periodic"
	// CommitlogSyncBatch syncs before acknowledging a write.
	CommitlogSyncBatch = "batch"

	// snitchPackage qualifies a short snitch class name, as cassandra.yaml
	// does.
	snitchPackage = "org.apache.cassandra.locator."
)

// Config holds thriftd's settings: the YAML keys of the config file,
// most of them also command-line flags (see RegisterFlags).
type Config struct {
	// Listen is the host:port of the Thrift server.
	Listen string `yaml:"listen"`
	// DataDir is the directory of the embedded store.
	DataDir string `yaml:"data_dir"`
	// Partitioner is a partitioner class name, short or fully qualified.
	Partitioner string `yaml:"partitioner"`
	// ClusterName is what describe_cluster_name answers.
	ClusterName string `yaml:"cluster_name"`
	// CommitlogSync is CommitlogSyncPeriodic or CommitlogSyncBatch.
	CommitlogSync string `yaml:"commitlog_sync"`
	// CommitlogSyncPeriodMS is the sync period in periodic mode.
	CommitlogSyncPeriodMS int `yaml:"commitlog_sync_period_ms"`
	// MemoryMB is the memory budget of the store, in MiB: it sizes its
	// memtables and caches and the Go runtime's memory limit.
	MemoryMB int `yaml:"memory_mb"`
	// APIVersion is what describe_version answers.
	APIVersion string `yaml:"api_version"`
	// MaxFrameMB is the largest Thrift frame accepted, in MiB.
	MaxFrameMB int `yaml:"max_frame_mb"`
	// Snitch is the snitch class name describe_snitch answers.
	Snitch string `yaml:"snitch"`
	// InitialToken is this node's token in the partitioner's string form;
	// empty means the partitioner's choice.
	InitialToken string `yaml:"initial_token"`

	// --- Authentication (auth.go). ---

	// Authenticator is AllowAllAuthenticator or PasswordAuthenticator
	// (Cassandra's class names, with or without their package).
	Authenticator string `yaml:"authenticator"`
	// --- End of authentication. ---

	// --- Production hardening: TLS, limits, timeouts, metrics (tls.go). ---

	// ClientEncryption is TLS on the Thrift port.
	ClientEncryption ClientEncryptionOptions `yaml:"client_encryption_options"`
	// MaxConnections is how many clients are served at once (0: no limit).
	MaxConnections int `yaml:"max_connections"`
	// ClientIdleTimeoutMS is how long a client may take to send a whole
	// request or to read a reply before it is dropped (0: no limit).
	ClientIdleTimeoutMS int `yaml:"client_idle_timeout_ms"`
	// ReadRequestTimeoutMS, RangeRequestTimeoutMS and
	// WriteRequestTimeoutMS bound the calls, as in cassandra.yaml (0: no
	// limit).
	ReadRequestTimeoutMS  int `yaml:"read_request_timeout_in_ms"`
	RangeRequestTimeoutMS int `yaml:"range_request_timeout_in_ms"`
	WriteRequestTimeoutMS int `yaml:"write_request_timeout_in_ms"`
	// MetricsListen is the host:port of the metrics endpoint (/metrics,
	// /healthz; see metrics.go); empty: none.
	MetricsListen string `yaml:"metrics_listen"`
	// PprofListen is the host:port of the endpoint of Go's runtime
	// profiles (/debug/pprof/; see profiles.go); empty: none.
	PprofListen string `yaml:"pprof_listen"`
	// --- End of production hardening. ---

	// --- Backend (backend.go). ---

	// Backend is where the data lives: empty or badger:DIR for the
	// embedded store, cql://host:port[,host:port...] for a CQL cluster.
	Backend string `yaml:"backend"`
	// CQLConsistency is the level of the CQL backend's requests when a
	// call leaves it to the server (empty: DefaultCQLConsistency).
	CQLConsistency string `yaml:"cql_consistency"`
	// CQLKeyspacePrefix goes before each legacy keyspace's name on the
	// cluster; CQLMetaKeyspace holds the legacy definitions (empty:
	// DefaultCQLMetaKeyspace).
	CQLKeyspacePrefix string `yaml:"cql_keyspace_prefix"`
	CQLMetaKeyspace   string `yaml:"cql_meta_keyspace"`
	// CQLLocalDC is the data center requests go to first.
	CQLLocalDC string `yaml:"cql_local_dc"`
	// CQLCredentials is a YAML file of the connection's login and TLS
	// (username, password, tls, tls_ca, tls_cert, tls_key,
	// tls_server_name, tls_insecure_skip_verify), which the cql_ settings
	// below override.
	CQLCredentials   string `yaml:"cql_credentials"`
	CQLUsername      string `yaml:"cql_username"`
	CQLPassword      string `yaml:"cql_password"`
	CQLTLSCA         string `yaml:"cql_tls_ca"`
	CQLTLSCert       string `yaml:"cql_tls_cert"`
	CQLTLSKey        string `yaml:"cql_tls_key"`
	CQLTLSServerName string `yaml:"cql_tls_server_name"`
	// --- End of backend. ---

	RingConfig `yaml:",inline"` // --advertise, --peers (ring.go)
}

// DefaultConfig returns the settings used where neither the config
// file nor a flag sets a value.
func DefaultConfig() Config {
	return Config{
		Listen:                DefaultListen,
		DataDir:               DefaultDataDir,
		Partitioner:           DefaultPartitioner,
		ClusterName:           DefaultClusterName,
		CommitlogSync:         CommitlogSyncPeriodic,
		CommitlogSyncPeriodMS: DefaultCommitlogSyncPeriodMS,
		MemoryMB:              DefaultMemoryMB,
		APIVersion:            DefaultAPIVersion,
		MaxFrameMB:            legacy.DefaultMaxFrameMB,
		Snitch:                DefaultSnitch,
		Authenticator:         DefaultAuthenticator, // authentication

		// Production hardening: Cassandra's defaults.
		ReadRequestTimeoutMS:  DefaultReadRequestTimeoutMS,
		RangeRequestTimeoutMS: DefaultRangeRequestTimeoutMS,
		WriteRequestTimeoutMS: DefaultWriteRequestTimeoutMS,
	}
}

// setting describes one key of Config: its YAML key, its flag (if
// any) and how to reach its field.
type setting struct {
	key   string
	flag  string
	usage string
	str   func(*Config) *string
	num   func(*Config) *int

	// Production hardening. check, if set, checks the key's YAML value
	// before decoding (a nested mapping). A key with a dot names a field
	// of a nested mapping that only a flag sets: the YAML goes through the
	// mapping's own key. also runs when the flag is given.
	check func(path string, value *yaml.Node) error
	also  func(*Config)
}

// settings lists every key, in the order of the example file.
var settings = []setting{
	{key: "listen", flag: "listen", usage: "host:port of the Thrift server",
		str: func(c *Config) *string { return &c.Listen }},
	{key: "data_dir", flag: "data-dir", usage: "directory of the embedded store",
		str: func(c *Config) *string { return &c.DataDir }},
	{key: "partitioner", flag: "partitioner", usage: "partitioner class: Murmur3Partitioner, RandomPartitioner, ByteOrderedPartitioner or OrderPreservingPartitioner",
		str: func(c *Config) *string { return &c.Partitioner }},
	{key: "cluster_name", flag: "cluster-name", usage: "cluster name reported to clients",
		str: func(c *Config) *string { return &c.ClusterName }},
	{key: "commitlog_sync", flag: "commitlog-sync", usage: "periodic or batch",
		str: func(c *Config) *string { return &c.CommitlogSync }},
	{key: "commitlog_sync_period_ms", usage: "sync period in periodic mode, in milliseconds",
		num: func(c *Config) *int { return &c.CommitlogSyncPeriodMS }},
	{key: "memory_mb", flag: "memory", usage: "memory budget in MiB: the Badger store's memtables, block cache, cell, counter and pack caches, and the Go memory limit (the limit alone with the cql backend)",
		num: func(c *Config) *int { return &c.MemoryMB }},
	{key: "api_version", flag: "api-version", usage: "Thrift API version reported by describe_version",
		str: func(c *Config) *string { return &c.APIVersion }},
	{key: "max_frame_mb", flag: "max-frame-mb", usage: "largest Thrift frame accepted, in MiB",
		num: func(c *Config) *int { return &c.MaxFrameMB }},
	{key: "snitch", flag: "snitch", usage: "snitch class reported by describe_snitch",
		str: func(c *Config) *string { return &c.Snitch }},
	{key: "initial_token", flag: "initial-token", usage: "this node's token (empty: the partitioner's choice)",
		str: func(c *Config) *string { return &c.InitialToken }},

	// --- Authentication (auth.go). ---
	{key: "authenticator", flag: "authenticator", usage: "AllowAllAuthenticator (allow-all) or PasswordAuthenticator (password: logins checked against the users of `thriftd user`)",
		str: func(c *Config) *string { return &c.Authenticator }},
	// --- End of authentication. ---

	// --- Production hardening. ---
	{key: clientEncryptionKey, usage: "TLS on the Thrift port (a mapping, see thriftd.example.yaml)",
		check: checkClientEncryptionYAML},
	{key: clientEncryptionKey + ".keystore", flag: "tls-cert", usage: "PEM certificate chain of the server (may hold the key too); turns TLS on",
		str:  func(c *Config) *string { return &c.ClientEncryption.Keystore },
		also: func(c *Config) { c.ClientEncryption.Enabled = true }},
	{key: clientEncryptionKey + ".private_key", flag: "tls-key", usage: "PEM private key of the server; turns TLS on",
		str:  func(c *Config) *string { return &c.ClientEncryption.PrivateKey },
		also: func(c *Config) { c.ClientEncryption.Enabled = true }},
	{key: clientEncryptionKey + ".truststore", flag: "tls-client-ca", usage: "PEM bundle of the CAs of client certificates: requires client certificates; turns TLS on",
		str: func(c *Config) *string { return &c.ClientEncryption.Truststore },
		also: func(c *Config) {
			c.ClientEncryption.Enabled = true
			c.ClientEncryption.RequireClientAuth = true
		}},
	{key: "max_connections", flag: "max-connections", usage: "clients served at once; more are disconnected and logged (0: no limit)",
		num: func(c *Config) *int { return &c.MaxConnections }},
	{key: "client_idle_timeout_ms", flag: "client-idle-timeout-ms", usage: "milliseconds a client may take to send a whole request or read a reply before it is dropped (0: no limit)",
		num: func(c *Config) *int { return &c.ClientIdleTimeoutMS }},
	{key: "read_request_timeout_in_ms", flag: "read-request-timeout-ms", usage: "milliseconds a read of named rows may take before TimedOutException (0: no limit)",
		num: func(c *Config) *int { return &c.ReadRequestTimeoutMS }},
	{key: "range_request_timeout_in_ms", flag: "range-request-timeout-ms", usage: "milliseconds a range read may take before TimedOutException (0: no limit)",
		num: func(c *Config) *int { return &c.RangeRequestTimeoutMS }},
	{key: "write_request_timeout_in_ms", flag: "write-request-timeout-ms", usage: "milliseconds a write may take before TimedOutException (0: no limit)",
		num: func(c *Config) *int { return &c.WriteRequestTimeoutMS }},
	{key: "metrics_listen", flag: "metrics-listen", usage: "host:port of the HTTP endpoint of Prometheus metrics (/metrics) and health (/healthz) (empty: none)",
		str: func(c *Config) *string { return &c.MetricsListen }},
	{key: "pprof_listen", flag: "pprof-listen", usage: "host:port of the HTTP endpoint of Go's runtime profiles (/debug/pprof/: CPU, heap, allocations, mutex and block contention) (empty: none)",
		str: func(c *Config) *string { return &c.PprofListen }},
	// --- End of production hardening. ---

	// --- Backend (backend.go). ---
	{key: "backend", flag: "backend", usage: "where the data lives: badger:DIR (the embedded store; default: data_dir) or cql://host:port[,host:port...] (a Cassandra or ScyllaDB cluster, its partitioner served)",
		str: func(c *Config) *string { return &c.Backend }},
	{key: "cql_consistency", flag: "cql-consistency", usage: "consistency level of the cql backend's reads and writes when a call asks for none (empty: " + DefaultCQLConsistency + ")",
		str: func(c *Config) *string { return &c.CQLConsistency }},
	{key: "cql_keyspace_prefix", flag: "cql-keyspace-prefix", usage: "prefix of the CQL keyspace of each legacy keyspace on the cluster",
		str: func(c *Config) *string { return &c.CQLKeyspacePrefix }},
	{key: "cql_meta_keyspace", flag: "cql-meta-keyspace", usage: "CQL keyspace of the legacy definitions of the families served (empty: " + DefaultCQLMetaKeyspace + ")",
		str: func(c *Config) *string { return &c.CQLMetaKeyspace }},
	{key: "cql_local_dc", flag: "cql-local-dc", usage: "data center of the cluster to send requests to, token-aware (default: every node, token-aware)",
		str: func(c *Config) *string { return &c.CQLLocalDC }},
	{key: "cql_credentials", flag: "cql-credentials", usage: "YAML file of the cluster connection's login and TLS (username, password, tls, tls_ca, tls_cert, tls_key, tls_server_name, tls_insecure_skip_verify); the other --cql- flags win over it",
		str: func(c *Config) *string { return &c.CQLCredentials }},
	{key: "cql_username", flag: "cql-username", usage: "user name to log in to the cluster with",
		str: func(c *Config) *string { return &c.CQLUsername }},
	{key: "cql_password", flag: "cql-password", usage: "password to log in to the cluster with (prefer --cql-credentials: a command line is visible to other users)",
		str: func(c *Config) *string { return &c.CQLPassword }},
	{key: "cql_tls_ca", flag: "cql-tls-ca", usage: "PEM file of the CA certificates to verify the cluster's nodes with; turns TLS on",
		str: func(c *Config) *string { return &c.CQLTLSCA }},
	{key: "cql_tls_cert", flag: "cql-tls-cert", usage: "PEM file of the client certificate for the cluster (with --cql-tls-key); turns TLS on",
		str: func(c *Config) *string { return &c.CQLTLSCert }},
	{key: "cql_tls_key", flag: "cql-tls-key", usage: "PEM file of the client certificate's private key; turns TLS on",
		str: func(c *Config) *string { return &c.CQLTLSKey }},
	{key: "cql_tls_server_name", flag: "cql-tls-server-name", usage: "name to verify the nodes' certificates against (default: each node's address); turns TLS on",
		str: func(c *Config) *string { return &c.CQLTLSServerName }},
	// --- End of backend. ---
	advertiseSetting, peersSetting, // ring.go
}

// copyTo copies the setting's value from src to dst.
func (s setting) copyTo(dst, src *Config) {
	if s.also != nil {
		s.also(dst)
	}
	if s.str != nil {
		*s.str(dst) = *s.str(src)
		return
	}
	*s.num(dst) = *s.num(src)
}

// nestedFlag reports whether the setting is a flag for a field of a nested
// mapping, which the file sets through the mapping's key.
func (s setting) nestedFlag() bool { return strings.Contains(s.key, ".") }

// name is how errors refer to a setting: its key, and its flag if any.
func (s setting) name() string {
	if s.flag == "" {
		return s.key
	}
	return s.key + " (--" + s.flag + ")"
}

func settingByKey(key string) setting {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.key == key })
	return settings[i]
}

// LoadConfig reads a YAML config file over the defaults and
// validates the result. A key the file may not hold is refused with an
// error naming it, its line and the file.
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	if err := cfg.overlayFile(path); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// overlayFile sets the keys present in the YAML file at path.
func (c *Config) overlayFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	return c.overlayYAML(path, data)
}

// overlayYAML sets the keys present in data, the contents of the file
// named path.
func (c *Config) overlayYAML(path string, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil // comments only
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return fmt.Errorf("config %s:%d: expected a mapping of settings (key: value)", path, top.Line)
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, value := top.Content[i], top.Content[i+1]
		j := slices.IndexFunc(settings, func(s setting) bool { return s.key == key.Value && !s.nestedFlag() })
		if j < 0 {
			return fmt.Errorf("config %s:%d: unknown key %q (known keys: %s)", path, key.Line, key.Value, knownKeys())
		}
		// YAML would truncate 1.5 to 1 silently.
		if settings[j].num != nil && value.Tag != "!!int" && value.Tag != "!!null" {
			return fmt.Errorf("config %s:%d: %s must be an integer, not %q", path, value.Line, key.Value, value.Value)
		}
		if check := settings[j].check; check != nil {
			if err := check(path, value); err != nil {
				return err
			}
		}
	}
	if err := top.Decode(c); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

func knownKeys() string {
	var keys []string
	for _, s := range settings {
		if !s.nestedFlag() {
			keys = append(keys, s.key)
		}
	}
	return strings.Join(keys, ", ")
}

var (
	apiVersionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	javaClassPattern  = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)
)

// Validate checks every setting and reports all the invalid ones.
func (c Config) Validate() error {
	var errs []error
	invalid := func(key string, value any, why string) {
		errs = append(errs, fmt.Errorf("invalid %s %q: %s", settingByKey(key).name(), fmt.Sprint(value), why))
	}
	if err := validateListen(c.Listen); err != nil {
		invalid("listen", c.Listen, err.Error())
	}
	if strings.TrimSpace(c.DataDir) == "" {
		invalid("data_dir", c.DataDir, "must not be empty")
	}
	p, err := partition.ByName(c.Partitioner)
	if err != nil {
		invalid("partitioner", c.Partitioner, err.Error())
	}
	if strings.TrimSpace(c.ClusterName) == "" {
		invalid("cluster_name", c.ClusterName, "must not be empty")
	}
	if c.CommitlogSync != CommitlogSyncPeriodic && c.CommitlogSync != CommitlogSyncBatch {
		invalid("commitlog_sync", c.CommitlogSync, "must be periodic or batch")
	}
	if c.CommitlogSyncPeriodMS <= 0 {
		invalid("commitlog_sync_period_ms", c.CommitlogSyncPeriodMS, "must be a positive number of milliseconds")
	}
	if c.MemoryMB < minMemoryMB || c.MemoryMB > maxMemoryMB {
		invalid("memory_mb", c.MemoryMB, fmt.Sprintf("must be between %d and %d", minMemoryMB, maxMemoryMB))
	}
	if !apiVersionPattern.MatchString(c.APIVersion) {
		invalid("api_version", c.APIVersion, "must be major.minor.patch, e.g. 19.39.0")
	}
	if c.MaxFrameMB < 1 || c.MaxFrameMB > legacy.MaxFrameMBLimit {
		invalid("max_frame_mb", c.MaxFrameMB, fmt.Sprintf("must be between 1 and %d", legacy.MaxFrameMBLimit))
	}
	if !javaClassPattern.MatchString(c.Snitch) {
		invalid("snitch", c.Snitch, "must be a Java class name, e.g. SimpleSnitch or org.apache.cassandra.locator.SimpleSnitch")
	}
	if c.InitialToken != "" && p != nil {
		if _, err := p.ParseToken(c.InitialToken); err != nil {
			invalid("initial_token", c.InitialToken, err.Error())
		}
	}
	// Production hardening.
	errs = append(errs, c.ClientEncryption.validate()...)
	for _, key := range []string{"max_connections", "client_idle_timeout_ms", "read_request_timeout_in_ms", "range_request_timeout_in_ms", "write_request_timeout_in_ms"} {
		if v := *settingByKey(key).num(&c); v < 0 {
			invalid(key, v, "must be 0 (no limit) or more")
		}
	}
	if c.MetricsListen != "" {
		if err := validateListen(c.MetricsListen); err != nil {
			invalid("metrics_listen", c.MetricsListen, err.Error()+" (or empty: no metrics endpoint)")
		}
	}
	if c.PprofListen != "" {
		if err := validateListen(c.PprofListen); err != nil {
			invalid("pprof_listen", c.PprofListen, err.Error()+" (or empty: no profiles endpoint)")
		}
	}
	errs = append(errs, c.authErrors()...) // authentication
	// Backend.
	errs = append(errs, c.backendErrors()...)
	errs = append(errs, c.ringErrors()...) // ring.go
	return errors.Join(errs...)
}

// validateListen checks a host:port listen address.
func validateListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, e.g. 127.0.0.1:9160")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return errors.New("the port must be a number from 0 to 65535")
	}
	return nil
}

// PartitionerImpl returns the configured partitioner.
func (c Config) PartitionerImpl() (partition.Partitioner, error) {
	p, err := partition.ByName(c.Partitioner)
	if err != nil {
		return nil, fmt.Errorf("config partitioner: %w", err)
	}
	return p, nil
}

// SnitchClass is the fully qualified snitch class, as describe_snitch
// reports it: a name without a package is taken from Cassandra's locator
// package.
func (c Config) SnitchClass() string {
	if strings.Contains(c.Snitch, ".") {
		return c.Snitch
	}
	return snitchPackage + c.Snitch
}

// Server is what the network server needs of the settings.
func (c Config) Server() legacy.ServerConfig {
	return legacy.ServerConfig{Listen: c.Listen, MaxFrameMB: c.MaxFrameMB,
		// Production hardening.
		MaxConnections: c.MaxConnections,
		IdleTimeout:    ms(c.ClientIdleTimeoutMS),
		RequestTimeouts: legacy.RequestTimeouts{
			Read:  ms(c.ReadRequestTimeoutMS),
			Range: ms(c.RangeRequestTimeoutMS),
			Write: ms(c.WriteRequestTimeoutMS),
		},
	}
}

// ms is a number of milliseconds as a duration.
func ms(n int) time.Duration {
	return time.Duration(n) * time.Millisecond
}

// CommitlogSyncPeriod is commitlog_sync_period_ms as a duration.
func (c Config) CommitlogSyncPeriod() time.Duration {
	return time.Duration(c.CommitlogSyncPeriodMS) * time.Millisecond
}

// Flags are thriftd's command-line flags, bound to a Config.
type Flags struct {
	fs         *flag.FlagSet
	values     *Config
	configPath string
}

// RegisterFlags registers thriftd's flags on fs: --config (the YAML
// file) and one flag per setting that has one (--listen, --data-dir,
// --partitioner, --cluster-name, --commitlog-sync, --api-version,
// --max-frame-mb, --snitch, --initial-token). Parsing fs writes the flags'
// values into values, which RegisterFlags first sets to the
// defaults. Resolve merges them with the file.
func RegisterFlags(fs *flag.FlagSet, values *Config) *Flags {
	defaults := DefaultConfig()
	*values = defaults
	f := &Flags{fs: fs, values: values}
	fs.StringVar(&f.configPath, "config", "", "YAML config file (flags override its settings)")
	for _, s := range settings {
		if s.flag == "" {
			continue
		}
		usage := s.usage + " (config key " + s.key + ")"
		if s.str != nil {
			fs.StringVar(s.str(values), s.flag, *s.str(&defaults), usage)
		} else {
			fs.IntVar(s.num(values), s.flag, *s.num(&defaults), usage)
		}
	}
	return f
}

// ConfigPath is the value of --config, or "".
func (f *Flags) ConfigPath() string { return f.configPath }

// Set returns the YAML keys of the settings given on the command line.
func (f *Flags) Set() []string {
	var keys []string
	for _, s := range f.setSettings() {
		keys = append(keys, s.key)
	}
	return keys
}

func (f *Flags) setSettings() []setting {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var out []setting
	for _, s := range settings {
		if s.flag != "" && given[s.flag] {
			out = append(out, s)
		}
	}
	return out
}

// ApplyTo copies the settings given on the command line into dst.
func (f *Flags) ApplyTo(dst *Config) {
	for _, s := range f.setSettings() {
		s.copyTo(dst, f.values)
	}
}

// Resolve returns the configuration in force after parsing: the defaults,
// overlaid by the --config file if given, overlaid by the flags given on
// the command line; then validated.
func (f *Flags) Resolve() (Config, error) {
	cfg := DefaultConfig()
	if f.configPath != "" {
		if err := cfg.overlayFile(f.configPath); err != nil {
			return Config{}, err
		}
	}
	f.ApplyTo(&cfg)
	if err := cfg.Validate(); err != nil {
		if f.configPath != "" {
			return Config{}, fmt.Errorf("config %s with command-line flags: %w", f.configPath, err)
		}
		return Config{}, fmt.Errorf("command-line flags: %w", err)
	}
	return cfg, nil
}
