package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/legacy"
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

// openAuth takes the lock of the data directory, which a running thriftd
// holds, and returns the authenticator: nil for AllowAllAuthenticator;
// for PasswordAuthenticator, which needs at least one user, the users of
// the data directory with their permissions (Cassandra's
// CassandraAuthorizer), read again when `thriftd user` changes them.
func openAuth(cfg Config, logger *slog.Logger) (*auth.Lock, legacy.Authenticator, error) {
	lock, err := auth.LockDir(cfg.DataDir)
	if err != nil {
		if errors.Is(err, auth.ErrLocked) {
			return nil, nil, fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
		}
		return nil, nil, err
	}
	if cfg.AuthenticatorClass() != PasswordAuthenticator {
		return lock, nil, nil
	}
	live, err := auth.OpenLive(cfg.DataDir, logger)
	if err != nil {
		lock.Unlock()
		return nil, nil, err
	}
	users := live.Users()
	if len(users.Users) == 0 {
		lock.Unlock()
		return nil, nil, fmt.Errorf("authenticator %s: no users in %s; add one with `thriftd user add NAME --data-dir %s` (it reads the password from standard input)",
			PasswordAuthenticator, auth.Path(cfg.DataDir), cfg.DataDir)
	}
	superusers := 0
	for _, u := range users.Users {
		if u.Superuser {
			superusers++
		}
	}
	logger.Info("authentication required", "authenticator", PasswordAuthenticator, "authorizer", "CassandraAuthorizer",
		"users", len(users.Users), "superusers", superusers)
	return lock, live, nil
}
