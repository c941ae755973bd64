package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/auth/cqlusers"
	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/cqlstore"
)

// Authenticators, under Cassandra's class names (cassandra.yaml's
// authenticator). The flag also takes the short names allow-all and
// password.
const (
	AllowAllAuthenticator = "AllowAllAuthenticator"
	PasswordAuthenticator = "PasswordAuthenticator"

	// DefaultAuthenticator accepts every login and requires none.
	DefaultAuthenticator = AllowAllAuthenticator

	authPackage = "org.apache.cassandra.auth."
)

// AuthenticatorClass is the configured authenticator as a class name
// without its package (AllowAllAuthenticator or PasswordAuthenticator), or
// "" if it is none of them.
func (c Config) AuthenticatorClass() string {
	name := strings.TrimPrefix(c.Authenticator, authPackage)
	switch name {
	case AllowAllAuthenticator, "allow-all", "allowall", "":
		return AllowAllAuthenticator
	case PasswordAuthenticator, "password":
		return PasswordAuthenticator
	}
	return ""
}

// authErrors reports an invalid authenticator.
func (c Config) authErrors() []error {
	if c.AuthenticatorClass() == "" {
		return []error{fmt.Errorf("invalid %s %q: must be AllowAllAuthenticator (allow-all) or PasswordAuthenticator (password)",
			settingByKey("authenticator").name(), c.Authenticator)}
	}
	return nil
}

// openAuth returns the authenticator: nil for AllowAllAuthenticator;
// for PasswordAuthenticator, which needs at least one user, the users
// with their permissions (Cassandra's CassandraAuthorizer), read again
// when `thriftd user` changes them. With the Badger backend they are the
// users file of the data directory, whose lock, which a running thriftd
// holds, it takes; with the CQL backend they are the cluster's
// (auth/cqlusers), in the engine's metadata keyspace, and no local lock
// is taken.
func openAuth(ctx context.Context, cfg Config, engine store.Engine, logger *slog.Logger) (*auth.Lock, legacy.Authenticator, error) {
	var lock *auth.Lock
	var users auth.Store = auth.FileStore{Dir: cfg.DataDir}
	hint := "--data-dir " + cfg.DataDir
	place := "in " + auth.Path(cfg.DataDir)
	if ce, ok := engine.(*cqlstore.Engine); ok {
		if cfg.AuthenticatorClass() != PasswordAuthenticator {
			return nil, nil, nil
		}
		cs, err := cqlusers.Open(ctx, ce.Session(), ce.MetaKeyspace(), "")
		if err != nil {
			return nil, nil, err
		}
		users = cs
		place = cs.String()
		hint = "--backend " + cfg.Backend
		if cfg.CQLMetaKeyspace != "" && cfg.CQLMetaKeyspace != DefaultCQLMetaKeyspace {
			hint += " --cql-meta-keyspace " + cfg.CQLMetaKeyspace
		}
	} else {
		var err error
		lock, err = auth.LockDir(cfg.DataDir)
		if err != nil {
			if errors.Is(err, auth.ErrLocked) {
				return nil, nil, fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
			}
			return nil, nil, err
		}
		if cfg.AuthenticatorClass() != PasswordAuthenticator {
			return lock, nil, nil
		}
	}
	unlock := func() {
		if lock != nil {
			lock.Unlock()
		}
	}
	live, err := auth.OpenLiveStore(ctx, users, logger)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	current := live.Users()
	if len(current.Users) == 0 {
		unlock()
		return nil, nil, fmt.Errorf("authenticator %s: no users %s; add one with `thriftd user add NAME %s` (it reads the password from standard input)",
			PasswordAuthenticator, place, hint)
	}
	superusers := 0
	for _, u := range current.Users {
		if u.Superuser {
			superusers++
		}
	}
	logger.Info("authentication required", "authenticator", PasswordAuthenticator, "authorizer", "CassandraAuthorizer",
		"users", len(current.Users), "superusers", superusers, "store", users.String())
	return lock, live, nil
}

// OpenUsersStore returns where cfg keeps its users, for `thriftd user`:
// the users file of the data directory, or with a cql:// backend the
// users row of the cluster, over a connection that close ends.
func OpenUsersStore(ctx context.Context, cfg Config, logger *slog.Logger) (users auth.Store, close func(), err error) {
	b, err := cfg.BackendSpec()
	if err != nil {
		return nil, nil, fmt.Errorf("backend: %w", err)
	}
	if b.Kind != BackendCQL {
		return auth.FileStore{Dir: cfg.StoreDir()}, func() {}, nil
	}
	s, err := cfg.cqlSettings()
	if err != nil {
		return nil, nil, err
	}
	tlsCfg, err := s.TLSConfig("cluster")
	if err != nil {
		return nil, nil, err
	}
	session, err := cqlconn.NewSession(cqlconn.Config{
		Hosts: b.Hosts, Consistency: gocql.Quorum, Timeout: 10 * time.Second, NumConns: 1, Logger: logger,
		Username: s.Username, Password: s.Password, TLS: tlsCfg, LocalDC: cfg.CQLLocalDC,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("backend %s: %w", cfg.Backend, err)
	}
	cs, err := cqlusers.Open(ctx, session, cmp.Or(cfg.CQLMetaKeyspace, DefaultCQLMetaKeyspace), "")
	if err != nil {
		session.Close()
		return nil, nil, err
	}
	return cs, session.Close, nil
}
