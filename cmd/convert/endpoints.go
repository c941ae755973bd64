package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/migrate/cqlsink"
	"github.com/thriftbridge/thriftbridge/migrate/enginesource"
	"github.com/thriftbridge/thriftbridge/migrate/jsonsource"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// checkSource checks the form of --from (and that a json: source has its
// --schema), without opening it.
func checkSource(c *config) error {
	scheme, _, ok := strings.Cut(c.from, ":")
	if !ok {
		return fmt.Errorf("--from %q: expected thrift://host:port/Keyspace, badger:DIR/Keyspace or json:PATH", c.from)
	}
	switch scheme {
	case "thrift":
		_, _, err := thriftAddress(c.from)
		return err
	case "badger":
		return nil
	case "json":
		if c.schema == "" {
			return fmt.Errorf("--from %s needs --schema FILE (the keyspace's JSON schema)", c.from)
		}
		return nil
	}
	return fmt.Errorf("--from %q: unknown source %q (thrift, badger or json)", c.from, scheme)
}

// openSource opens --from, whose form checkSource has checked.
func openSource(ctx context.Context, c *config) (migrate.Source, error) {
	if err := checkSource(c); err != nil {
		return nil, err
	}
	scheme, rest, _ := strings.Cut(c.from, ":")
	switch scheme {
	case "thrift":
		addr, keyspace, err := thriftAddress(c.from)
		if err != nil {
			return nil, err
		}
		tlsCfg, err := c.conn.source.TLSConfig("source")
		if err != nil {
			return nil, err
		}
		opts := thriftsource.Options{RowPageSize: c.rowPageSize, ColumnPageSize: c.columnPageSize,
			ConnOptions: thriftsource.ConnOptions{Username: c.conn.source.Username, Password: c.conn.source.Password, TLS: tlsCfg}}
		src, err := thriftsource.Open(ctx, addr, keyspace, opts)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %w", c.from, loginHint(err, "source"))
		}
		return src, nil
	case "badger":
		return openBadger(ctx, c, rest)
	case "json":
		b, err := os.ReadFile(c.schema)
		if err != nil {
			return nil, fmt.Errorf("--schema: %w", err)
		}
		var ks supercol.KeyspaceDef
		if err := json.Unmarshal(b, &ks); err != nil {
			return nil, fmt.Errorf("--schema %s: %w", c.schema, err)
		}
		var opts []jsonsource.Option
		if now := c.clock(); now != nil {
			opts = append(opts, jsonsource.WithClock(now))
		}
		src, err := jsonsource.Open(ks, rest, opts...)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %w", c.from, err)
		}
		return src, nil
	}
	return nil, fmt.Errorf("--from %q: unknown source %q (thrift, badger or json)", c.from, scheme)
}

// warnUnlisted warns about the tables of a Cassandra source that Thrift
// does not list, and that the conversion therefore leaves out.
func warnUnlisted(ctx context.Context, src migrate.Source, log *slog.Logger) {
	ts, ok := src.(*thriftsource.Source)
	if !ok {
		return
	}
	names, err := ts.UnlistedTables(ctx)
	if err != nil {
		log.Debug("could not list the CQL tables of the source", "err", err)
		return
	}
	if len(names) > 0 {
		log.Warn("these CQL tables (or views) of the source keyspace are not visible over Thrift and are not converted: copy them with CQL tools (cqlsh COPY, dsbulk)", "tables", strings.Join(names, ","))
	}
}

// thriftAddress splits thrift://host:port/Keyspace.
func thriftAddress(s string) (addr, keyspace string, err error) {
	rest, ok := strings.CutPrefix(s, "thrift://")
	addr, keyspace, _ = strings.Cut(rest, "/")
	if !ok || addr == "" || keyspace == "" || strings.Contains(keyspace, "/") {
		return "", "", fmt.Errorf("%q: expected thrift://host:port/Keyspace", s)
	}
	if !strings.Contains(addr, ":") {
		addr += ":9160"
	}
	return addr, keyspace, nil
}

// engineSource is an enginesource.Source that owns its engine.
type engineSource struct {
	*enginesource.Source
	engine *badgerstore.Engine
}

func (s engineSource) Close() error {
	return errors.Join(s.Source.Close(), s.engine.Close())
}

// openBadger opens a thriftd data directory read for conversion. The
// store records its partitioner; unless --partitioner names one, each
// known partitioner is tried until the store accepts it.
func openBadger(ctx context.Context, c *config, spec string) (migrate.Source, error) {
	spec = strings.TrimSuffix(spec, "/")
	dir, keyspace := filepath.Dir(spec), filepath.Base(spec)
	if keyspace == "" || keyspace == "." || keyspace == "/" {
		return nil, fmt.Errorf("--from badger:%s: expected badger:DIR/Keyspace", spec)
	}
	// Opening creates a missing store: make sure there is one.
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return nil, fmt.Errorf("--from badger:%s: %s is not a thriftd data directory: %w", spec, dir, err)
	}
	candidates := []string{"Murmur3Partitioner", "RandomPartitioner", "ByteOrderedPartitioner", "OrderPreservingPartitioner"}
	if c.partitioner != "" {
		candidates = []string{c.partitioner}
	}
	var errs []error
	for _, name := range candidates {
		part, err := partition.ByName(name)
		if err != nil {
			return nil, fmt.Errorf("--partitioner: %w", err)
		}
		// Background tombstone collection stays off: the conversion only
		// reads.
		engine, err := badgerstore.Open(ctx, badgerstore.Options{Dir: dir, Partitioner: part, GCInterval: -1, Logger: slog.New(slog.DiscardHandler), Now: c.clock()})
		if err != nil {
			errs = append(errs, err)
			if c.partitioner == "" && strings.Contains(err.Error(), "cannot be opened with") {
				continue
			}
			return nil, fmt.Errorf("--from badger:%s: %w", spec, err)
		}
		src, err := enginesource.New(engine, keyspace)
		if err != nil {
			engine.Close()
			return nil, fmt.Errorf("--from badger:%s: %w", spec, err)
		}
		src.RowPageSize, src.ColumnPageSize = withDefault(c.rowPageSize, src.RowPageSize), withDefault(c.columnPageSize, src.ColumnPageSize)
		return engineSource{Source: src, engine: engine}, nil
	}
	return nil, fmt.Errorf("--from badger:%s: %w", spec, errors.Join(errs...))
}

func withDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// target is an opened --to.
type target struct {
	keyspace string // "" for a file: the source's name, unless --keyspace
	filePath string
	hosts    []string
}

func parseTarget(c *config) (target, error) {
	switch {
	case strings.HasPrefix(c.to, "file:"):
		path := strings.TrimPrefix(c.to, "file:")
		if path == "" {
			return target{}, fmt.Errorf("--to %q: expected file:OUT.cql", c.to)
		}
		return target{keyspace: c.keyspace, filePath: path}, nil
	case strings.HasPrefix(c.to, "cql:"):
		hosts, keyspace, err := cqlsink.ParseURL(c.to)
		if err != nil {
			return target{}, err
		}
		if c.keyspace != "" && c.keyspace != keyspace {
			return target{}, fmt.Errorf("--keyspace %s contradicts --to %s", c.keyspace, c.to)
		}
		return target{keyspace: keyspace, hosts: hosts}, nil
	}
	return target{}, fmt.Errorf("--to %q: expected cql://host:port/keyspace or file:OUT.cql", c.to)
}

func (c *config) gocqlConsistency() (gocql.Consistency, error) {
	cons, err := gocql.ParseConsistencyWrapper(strings.ToUpper(c.consistency))
	if err != nil {
		return 0, fmt.Errorf("--consistency %q: %w", c.consistency, err)
	}
	return cons, nil
}

// openSink opens the target for writing.
func openSink(ctx context.Context, c *config, t target, log *slog.Logger) (migrate.Sink, error) {
	if t.filePath != "" {
		return migrate.CreateFileSink(t.filePath, c.clock())
	}
	cons, err := c.gocqlConsistency()
	if err != nil {
		return nil, err
	}
	cfg, err := c.cqlConfig(t, log)
	if err != nil {
		return nil, err
	}
	cfg.Consistency, cfg.Concurrency, cfg.Rate, cfg.BatchSize = cons, c.concurrency, c.rate, c.batchSize
	sink, err := cqlsink.Connect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("--to %s: %w", c.to, loginHint(err, "target"))
	}
	return sink, nil
}

// cqlConfig is the connection of a cql: target: hosts, keyspace, login,
// TLS and local data center.
func (c *config) cqlConfig(t target, log *slog.Logger) (cqlsink.Config, error) {
	tlsCfg, err := c.conn.target.TLSConfig("target")
	if err != nil {
		return cqlsink.Config{}, err
	}
	return cqlsink.Config{Hosts: t.hosts, Keyspace: t.keyspace, Logger: log,
		Username: c.conn.target.Username, Password: c.conn.target.Password, TLS: tlsCfg, LocalDC: c.conn.localDC}, nil
}

// connSettings is how to log in to one end and encrypt the connection:
// from --credentials (YAML, cqlconn.Settings' field names) and the
// connection flags.
type connSettings = cqlconn.Settings

// credentialsFile is the YAML file of --credentials: settings for both
// ends, and in from: and to: the settings of one end.
type credentialsFile struct {
	cqlconn.Settings `yaml:",inline"`
	From             connSettings `yaml:"from"`
	To               connSettings `yaml:"to"`
}

// connFlags holds the connection flags: each setting for both ends
// (--username), for the source (--from-username) and for the target
// (--to-username), with --credentials and --local-dc.
type connFlags struct {
	both, from, to connSettings
	credentials    string
	localDC        string
	targetSide     bool
	// source and target are the settings of each end, resolved by check.
	source, target  connSettings
	credentialsPerm os.FileMode
}

// perEndPrefixes are the prefixes of the per-end forms of a connection
// flag.
var perEndPrefixes = []string{"from-", "to-"}

// connFlagNames are the connection settings that have a flag in the
// three forms.
var connFlagNames = []string{"username", "password", "tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name", "tls-insecure-skip-verify"}

// isPerEndFlag reports whether name is the --from- or --to- form of a
// connection flag.
func isPerEndFlag(name string) bool {
	for _, p := range perEndPrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && slices.Contains(connFlagNames, rest) {
			return true
		}
	}
	return false
}

// register adds the connection flags to fs; withTarget for the commands
// that have a --to.
func (f *connFlags) register(fs *flag.FlagSet, withTarget bool) {
	f.targetSide = withTarget
	add := func(s *connSettings, prefix, which string) {
		fs.StringVar(&s.Username, prefix+"username", "", "user name to log in with"+which)
		fs.StringVar(&s.Password, prefix+"password", "", "password to log in with"+which+" (prefer --credentials: a command line is visible to other users)")
		fs.BoolVar(&s.TLS, prefix+"tls", false, "connect with TLS"+which+", verifying the server against the system's CAs (implied by any --tls-* flag)")
		fs.StringVar(&s.TLSCA, prefix+"tls-ca", "", "`PEM` file of the CA certificates to verify the server with"+which)
		fs.StringVar(&s.TLSCert, prefix+"tls-cert", "", "`PEM` file of the client certificate"+which+" (with --tls-key)")
		fs.StringVar(&s.TLSKey, prefix+"tls-key", "", "`PEM` file of the client certificate's private key"+which)
		fs.StringVar(&s.TLSServerName, prefix+"tls-server-name", "", "name to verify the server's certificate against"+which+" (default: the host of the address)")
		fs.BoolVar(&s.TLSInsecureSkipVerify, prefix+"tls-insecure-skip-verify", false, "do not verify the server's certificate"+which+" (testing only)")
	}
	if withTarget {
		add(&f.both, "", ", both ends")
		add(&f.to, "to-", ", target only")
	} else {
		add(&f.both, "", "")
	}
	add(&f.from, "from-", ", source only")
	fs.StringVar(&f.credentials, "credentials", "", "YAML `FILE` of connection settings (username, password, tls, tls_ca, ...; from: and to: sections for one end): see below")
	if withTarget {
		fs.StringVar(&f.localDC, "local-dc", "", "data center of a cql: target to send requests to, token-aware (default: round robin over every node)")
	}
}

// check reads --credentials, resolves the settings of each end and
// refuses per-end settings for an end that is not a server.
func (f *connFlags) check(from, to string) error {
	var file credentialsFile
	if f.credentials != "" {
		perm, err := cqlconn.ReadCredentials(f.credentials, &file)
		if err != nil {
			return fmt.Errorf("--%w", err)
		}
		f.credentialsPerm = perm
	}
	f.source = file.Settings.Over(file.From).Over(f.both).Over(f.from)
	f.target = file.Settings.Over(file.To).Over(f.both).Over(f.to)
	if !strings.HasPrefix(from, "thrift:") && !f.from.IsZero() {
		return fmt.Errorf("--from-* connection flags: the source %s is not a server", from)
	}
	if f.targetSide && !strings.HasPrefix(to, "cql:") && !f.to.IsZero() {
		return fmt.Errorf("--to-* connection flags: the target %s is not a cluster", to)
	}
	if f.targetSide && !strings.HasPrefix(to, "cql:") && f.localDC != "" {
		return fmt.Errorf("--local-dc: the target %s is not a cluster", to)
	}
	for _, s := range []struct {
		end, flag string
		s         connSettings
	}{{"source", "from", f.source}, {"target", "to", f.target}} {
		if s.s.Password != "" && s.s.Username == "" {
			return fmt.Errorf("the %s has a password and no user name (--username, --%s-username or username: in --credentials)", s.end, s.flag)
		}
	}
	return nil
}

// warnCredentials warns when the --credentials file can be read by other
// users.
func (f *connFlags) warnCredentials(log *slog.Logger) {
	if f.credentials != "" && f.credentialsPerm&0o077 != 0 {
		log.Warn("the credentials file can be read by other users: chmod 600 it", "file", f.credentials, "mode", f.credentialsPerm.String())
	}
}

// loginHint adds what to do to an authentication error.
func loginHint(err error, end string) error {
	if errors.Is(err, thriftsource.ErrAuthentication) || errors.Is(err, cqlsink.ErrAuthentication) {
		side := map[string]string{"source": "from", "target": "to"}[end]
		return fmt.Errorf("%w (give the %s's user and password with --%s-username and --%s-password, --username and --password, or --credentials FILE)", err, end, side, side)
	}
	return err
}

// connUsage describes the connection flags under the flag list.
const connUsage = `Connecting to secured clusters (a thrift: source, a cql: target):
  --username, --password, --tls, --tls-ca, --tls-cert, --tls-key,
  --tls-server-name and --tls-insecure-skip-verify apply to both ends. Each
  also comes as --from-X, for the source only, and --to-X, for the target
  only (--from-username legacy --to-username migrator, --to-tls-ca ca.pem),
  which win over --X. --credentials FILE reads the same settings from a YAML
  file, so that no password is on the command line (chmod 600 it):

      username: migrator          # both ends
      password: s3cret
      from:                       # the source only
        username: legacy
        password: old-s3cret
      to:                         # the target only
        tls_ca: /etc/cassandra/ca.pem
        tls_cert: client.pem      # tls, tls_key, tls_server_name,
        tls_key: client-key.pem   # tls_insecure_skip_verify too

  Flags win over the file, and from:/to: over its top level. A Thrift
  source logs in with login() (PasswordAuthenticator) and, with TLS, speaks
  Thrift over TLS (client_encryption_options); a cql: target uses the
  native protocol's PasswordAuthenticator and TLS.
`

// planConnUsage describes the connection flags of plan.
const planConnUsage = `Connecting to a secured cluster (a thrift: source): --username, --password
and the --tls flags (their --from- forms too), or --credentials FILE, a YAML
file of the same settings (username, password, tls, tls_ca, tls_cert,
tls_key, tls_server_name, tls_insecure_skip_verify; a from: section wins over
the top level), so that no password is on the command line.
`
