package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
	"github.com/thriftbridge/thriftbridge/store/cqlstore"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// The backends thriftd serves the Thrift API from (the backend key,
// --backend): the embedded Badger store in a directory, the default, or
// the CQL tables of a Cassandra or ScyllaDB cluster (store/cqlstore).
const (
	BackendBadger = "badger"
	BackendCQL    = "cql"

	// DefaultCQLConsistency is the level of the CQL backend's requests
	// when a Thrift call leaves it to the server.
	DefaultCQLConsistency = "QUORUM"
	// DefaultCQLMetaKeyspace holds the legacy definitions of the families
	// the CQL backend serves.
	DefaultCQLMetaKeyspace = "thriftbridge_meta"

	backendForms = "badger:DIR or cql://host:port[,host:port...]"
)

// Backend is the parsed backend setting.
type Backend struct {
	// Kind is BackendBadger or BackendCQL.
	Kind string
	// Dir is the Badger store's directory.
	Dir string
	// Hosts are the CQL cluster's contact points, host:port.
	Hosts []string
}

// BackendSpec parses the backend setting: empty is the Badger store in
// data_dir, badger:DIR the Badger store in DIR (which then is the data
// directory), cql://host:port[,host:port...] a CQL cluster.
func (c Config) BackendSpec() (Backend, error) {
	spec := strings.TrimSpace(c.Backend)
	switch {
	case spec == "":
		return Backend{Kind: BackendBadger, Dir: c.DataDir}, nil
	case strings.HasPrefix(spec, BackendBadger+":"):
		dir := strings.TrimPrefix(spec, BackendBadger+":")
		if strings.TrimSpace(dir) == "" {
			return Backend{}, fmt.Errorf("badger: needs a directory, e.g. badger:./data")
		}
		return Backend{Kind: BackendBadger, Dir: dir}, nil
	case strings.HasPrefix(spec, BackendCQL+"://"):
		list := strings.TrimSuffix(strings.TrimPrefix(spec, BackendCQL+"://"), "/")
		if list == "" {
			return Backend{}, fmt.Errorf("cql:// needs the cluster's contact points, e.g. cql://127.0.0.1:9042")
		}
		if strings.Contains(list, "/") {
			return Backend{}, fmt.Errorf("cql:// takes no keyspace (the legacy keyspaces are the cluster's, see --cql-keyspace-prefix): expected %s", backendForms)
		}
		hosts, err := cqlconn.ParseHosts(list)
		if err != nil {
			return Backend{}, err
		}
		return Backend{Kind: BackendCQL, Hosts: hosts}, nil
	}
	return Backend{}, fmt.Errorf("must be %s", backendForms)
}

// StoreDir is the directory of the Badger store, or of the users' file
// alone with the CQL backend.
func (c Config) StoreDir() string {
	if b, err := c.BackendSpec(); err == nil && b.Kind == BackendBadger {
		return b.Dir
	}
	return c.DataDir
}

// cqlConsistency parses cql_consistency: a level for reads and writes
// alike (ANY and the serial levels are not).
func (c Config) cqlConsistency() (gocql.Consistency, error) {
	name := strings.ToUpper(strings.TrimSpace(c.CQLConsistency))
	if name == "" {
		name = DefaultCQLConsistency
	}
	level, err := gocql.ParseConsistencyWrapper(name)
	if err != nil {
		return 0, errors.New("must be a consistency level: ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM or LOCAL_ONE")
	}
	switch level {
	case gocql.Any, gocql.Serial, gocql.LocalSerial:
		return 0, fmt.Errorf("%s cannot be the level of every read and write: ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM or LOCAL_ONE", level)
	}
	return level, nil
}

// cqlSettings are the login and TLS of the CQL backend: the
// cql_credentials file, overlaid by the other cql_ settings.
func (c Config) cqlSettings() (cqlconn.Settings, error) {
	var file cqlconn.Settings
	if c.CQLCredentials != "" {
		if _, err := cqlconn.ReadCredentials(c.CQLCredentials, &file); err != nil {
			return cqlconn.Settings{}, err
		}
	}
	s := file.Over(cqlconn.Settings{Username: c.CQLUsername, Password: c.CQLPassword,
		TLSCA: c.CQLTLSCA, TLSCert: c.CQLTLSCert, TLSKey: c.CQLTLSKey, TLSServerName: c.CQLTLSServerName})
	if err := s.Check("cluster"); err != nil {
		return cqlconn.Settings{}, fmt.Errorf("%w (cql_username, --cql-username or username: in the credentials file)", err)
	}
	return s, nil
}

// backendErrors reports an invalid backend and CQL settings.
func (c Config) backendErrors() []error {
	var errs []error
	invalid := func(key string, value any, why string) {
		errs = append(errs, fmt.Errorf("invalid %s %q: %s", settingByKey(key).name(), fmt.Sprint(value), why))
	}
	b, err := c.BackendSpec()
	if err != nil {
		invalid("backend", c.Backend, err.Error())
		return errs
	}
	if b.Kind != BackendCQL {
		return nil
	}
	if _, err := c.cqlConsistency(); err != nil {
		invalid("cql_consistency", c.CQLConsistency, err.Error())
	}
	if p, err := partition.ByName(c.Partitioner); err == nil && p.Name() == (partition.OrderPreservingPartitioner{}).Name() {
		invalid("partitioner", c.Partitioner, "the cql backend serves clusters of Murmur3Partitioner, RandomPartitioner and ByteOrderedPartitioner")
	}
	if _, err := c.cqlSettings(); err != nil {
		invalid("cql_credentials", c.CQLCredentials, err.Error())
	}
	return errs
}

// openEngine opens the configured backend.
func openEngine(ctx context.Context, cfg Config, part partition.Partitioner, logger *slog.Logger, o options) (store.Engine, error) {
	b, err := cfg.BackendSpec()
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	if b.Kind == BackendCQL {
		return openCQL(ctx, cfg, b, part, logger)
	}
	sync := badgerstore.SyncPeriodic
	if cfg.CommitlogSync == CommitlogSyncBatch {
		sync = badgerstore.SyncBatch
	}
	e, err := badgerstore.Open(ctx, badgerstore.Options{
		Dir:          b.Dir,
		Partitioner:  part,
		Sync:         sync,
		SyncPeriod:   cfg.CommitlogSyncPeriod(),
		Logger:       logger,
		Now:          o.now,
		GCInterval:   o.gcInterval,
		MemoryBudget: int64(cfg.MemoryMB) << 20,
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// openCQL connects the CQL backend. An unreachable cluster, a refused
// login or a cluster of another partitioner is an error naming the
// cluster.
func openCQL(ctx context.Context, cfg Config, b Backend, part partition.Partitioner, logger *slog.Logger) (store.Engine, error) {
	level, err := cfg.cqlConsistency()
	if err != nil {
		return nil, fmt.Errorf("cql_consistency: %w", err)
	}
	s, err := cfg.cqlSettings()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := s.TLSConfig("cluster")
	if err != nil {
		return nil, err
	}
	// The cluster's partitioner is served; one configured other than the
	// default must be the cluster's.
	if cfg.Partitioner == DefaultPartitioner {
		part = nil
	}
	e, err := cqlstore.Open(ctx, cqlstore.Options{
		Hosts:          b.Hosts,
		Partitioner:    part,
		MetaKeyspace:   cmp.Or(cfg.CQLMetaKeyspace, DefaultCQLMetaKeyspace),
		KeyspacePrefix: cfg.CQLKeyspacePrefix,
		Consistency:    level,
		Logger:         logger,
		Username:       s.Username,
		Password:       s.Password,
		TLS:            tlsCfg,
		LocalDC:        cfg.CQLLocalDC,
	})
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", cfg.Backend, err)
	}
	paceCQLCollector(cfg.MemoryMB, logger) // memory.go
	logger.Info("serving from a CQL cluster", "hosts", strings.Join(b.Hosts, ","), "consistency", level.String(),
		"meta_keyspace", cmp.Or(cfg.CQLMetaKeyspace, DefaultCQLMetaKeyspace), "keyspace_prefix", cfg.CQLKeyspacePrefix, "local_dc", cfg.CQLLocalDC, "tls", tlsCfg != nil)
	return e, nil
}
