package legacy

import (
	"context"
	"fmt"

	"github.com/thriftbridge/thriftbridge/store"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Authenticator checks the passwords of login, as Cassandra's
// PasswordAuthenticator does. With HandlerConfig.Auth nil, thriftd behaves
// as AllowAllAuthenticator: every login is accepted and nothing requires
// one. An Authenticator that is also an Authorizer (auth.Live is) has its
// permissions enforced, as with Cassandra's CassandraAuthorizer; one that
// is not lets a logged-in user do everything (AllowAllAuthorizer).
type Authenticator interface {
	// Authenticate reports whether password is user's. It must take about
	// as long for an unknown user as for a wrong password.
	Authenticate(user, password string) bool
}

// Authorizer decides what a logged-in user may do, as Cassandra's
// CassandraAuthorizer does.
type Authorizer interface {
	// Permitted reports whether user may do action on family of keyspace
	// (family "" for the keyspace, keyspace "" for every keyspace), by a
	// permission on it or on a resource above it. It is asked on every
	// call, so it must not do I/O each time.
	Permitted(ctx context.Context, user, action, keyspace, family string) bool
}

// Action is one of Cassandra's permissions, in the words of its messages.
// An Authorizer grants them (thriftd's read is SELECT, write is MODIFY,
// schema is CREATE, ALTER and DROP).
type Action string

// The permissions the Thrift calls need, as Cassandra 3.11 checks them.
const (
	ActionSelect Action = "SELECT"
	ActionModify Action = "MODIFY"
	ActionCreate Action = "CREATE"
	ActionAlter  Action = "ALTER"
	ActionDrop   Action = "DROP"
)

// Cassandra 3.11's answers to a refused login and to a call made before
// logging in (ClientState, PasswordAuthenticator). Thrift 3.11 reports a
// missing login as an InvalidRequestException.
const (
	notLoggedIn = "You have not logged in"
)

// authRequired reports whether calls need a login (PasswordAuthenticator).
func (h *Handler) authRequired() bool { return h.cfg.Auth != nil }

// requireLogin refuses a call of a session that has not logged in, when
// logins are required.
func (h *Handler) requireLogin(ctx context.Context) error {
	if !h.authRequired() {
		return nil
	}
	if s := SessionFrom(ctx); s == nil || !s.LoggedIn() {
		return ire(notLoggedIn)
	}
	return nil
}

// authorize checks that the session may do actions on family cf of
// keyspace ks (cf "" for the keyspace itself, ks "" for every keyspace),
// in order. It is called where Cassandra 3.11 checks access: after the
// keyspace and the family were resolved, before anything else is
// validated. A refusal is Cassandra 3.11's: its UnauthorizedException,
// which Thrift answers as an InvalidRequestException with the same text.
func (h *Handler) authorize(ctx context.Context, ks, cf string, actions ...Action) error {
	if err := h.requireLogin(ctx); err != nil {
		return err
	}
	az, ok := h.cfg.Auth.(Authorizer)
	if !ok {
		return nil
	}
	user := SessionFrom(ctx).User()
	for _, action := range actions {
		if !az.Permitted(ctx, user, string(action), ks, cf) {
			return iref("User %s has no %s permission on %s or any of its parents", user, action, dataResource(ks, cf))
		}
	}
	return nil
}

// Revoker is an Authorizer that revokes the permissions on a keyspace or
// family once it is dropped, as Cassandra 3.11 does, so that one created
// again under the same name is not open to the old grantees.
type Revoker interface {
	// RevokeAllOn revokes every user's permissions on family of keyspace
	// (family "" for the keyspace and all its families).
	RevokeAllOn(ctx context.Context, keyspace, family string) error
}

// revokeAllOn revokes the permissions on a dropped keyspace or family. The
// drop is done: a failure is logged, not answered.
func (h *Handler) revokeAllOn(ctx context.Context, ks, cf string) {
	r, ok := h.cfg.Auth.(Revoker)
	if !ok {
		return
	}
	if err := r.RevokeAllOn(ctx, ks, cf); err != nil {
		h.log.ErrorContext(ctx, "dropped, but the permissions on it could not be revoked; revoke them with thriftd user revoke",
			"resource", dataResource(ks, cf), "err", err)
	}
}

// dataResource names a keyspace, a family of one or every keyspace as
// Cassandra's messages do.
func dataResource(ks, cf string) string {
	switch {
	case ks == "":
		return "<all keyspaces>"
	case cf == "":
		return "<keyspace " + ks + ">"
	}
	return "<table " + ks + "." + cf + ">"
}

// tableAccess resolves a family of the session's keyspace, as table does,
// and checks the session may do actions on it.
func (h *Handler) tableAccess(ctx context.Context, cf string, actions ...Action) (*store.Table, error) {
	t, err := h.table(ctx, cf)
	if err != nil {
		return nil, err
	}
	if err := h.authorize(ctx, t.Def.Keyspace, t.Def.Name, actions...); err != nil {
		return nil, err
	}
	return t, nil
}

// Login implements login. Without an Authenticator every login is
// accepted, as Cassandra's AllowAllAuthenticator does, and the user name
// (credential "username") is recorded in the session. With one, the
// credentials "username" and "password" must match a user, or login
// fails with Cassandra 3.11's AuthenticationException, which names the
// user given but not which of the two was wrong; a failed login leaves
// the session as it was. Neither credential is ever logged.
func (h *Handler) Login(ctx context.Context, auth *cassandra.AuthenticationRequest) error {
	s := SessionFrom(ctx)
	var creds map[string]string
	if auth != nil {
		creds = auth.Credentials
	}
	if !h.authRequired() {
		if s != nil && auth != nil {
			s.Login(creds["username"])
		}
		return nil
	}
	user, ok := creds["username"]
	if !ok {
		return &cassandra.AuthenticationException{Why: "Required key 'username' is missing"}
	}
	password, ok := creds["password"]
	if !ok {
		return &cassandra.AuthenticationException{Why: fmt.Sprintf("Required key 'password' is missing for provided username %s", user)}
	}
	if !h.cfg.Auth.Authenticate(user, password) {
		h.log.InfoContext(ctx, "login refused: wrong user name or password", sessionAttrs(s)...)
		return &cassandra.AuthenticationException{Why: fmt.Sprintf("Provided username %s and/or password are incorrect", user)}
	}
	if s != nil {
		s.Login(user)
	}
	return nil
}

// sessionAttrs identifies a connection in a log record.
func sessionAttrs(s *Session) []any {
	if s == nil {
		return nil
	}
	attrs := []any{"conn", s.ID()}
	if s.RemoteAddr() != nil {
		attrs = append(attrs, "remote", s.RemoteAddr().String())
	}
	return attrs
}
