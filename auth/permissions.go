package auth

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Permission is one of thriftd's permissions.
type Permission string

// thriftd's permissions, each a set of Cassandra's (Permission.Cassandra).
const (
	Read   Permission = "read"
	Write  Permission = "write"
	Schema Permission = "schema"
)

// Permissions are thriftd's permissions, in order.
var Permissions = []Permission{Read, Write, Schema}

// ParsePermission returns the permission named s (read, write or schema).
func ParsePermission(s string) (Permission, error) {
	p := Permission(s)
	if !slices.Contains(Permissions, p) {
		return "", fmt.Errorf("unknown permission %q: read, write or schema", s)
	}
	return p, nil
}

// Cassandra returns Cassandra's permissions that p is on r: read is
// SELECT, write is MODIFY, schema is CREATE, ALTER and DROP, but ALTER
// and DROP only on a family, where CREATE does not apply.
func (p Permission) Cassandra(r Resource) []string {
	switch p {
	case Read:
		return []string{"SELECT"}
	case Write:
		return []string{"MODIFY"}
	case Schema:
		if r.Family != "" {
			return []string{"ALTER", "DROP"}
		}
		return []string{"CREATE", "ALTER", "DROP"}
	}
	return nil
}

// allows reports whether p, granted on a family (onFamily) or above, is
// Cassandra's permission action: Cassandra without its allocation, for
// every call.
func (p Permission) allows(action string, onFamily bool) bool {
	switch p {
	case Read:
		return action == "SELECT"
	case Write:
		return action == "MODIFY"
	case Schema:
		return action == "ALTER" || action == "DROP" || (action == "CREATE" && !onFamily)
	}
	return false
}

// Resource is what a permission is granted on: every keyspace (both names
// empty), a keyspace, or a family of one; as Cassandra's data resources,
// a grant on one holds for those below it.
type Resource struct {
	Keyspace string
	Family   string
}

// String is the resource as Cassandra's messages name it: <all
// keyspaces>, <keyspace ks> or <table ks.cf>.
func (r Resource) String() string {
	switch {
	case r.Keyspace == "":
		return "<all keyspaces>"
	case r.Family == "":
		return "<keyspace " + r.Keyspace + ">"
	}
	return "<table " + r.Keyspace + "." + r.Family + ">"
}

// namePattern is Cassandra's: keyspace and table names are 1 to 48 word
// characters.
var namePattern = regexp.MustCompile(`^\w{1,48}$`)

// Check reports whether r can be granted on: names Cassandra accepts, and
// a family only within a keyspace.
func (r Resource) Check() error {
	if r.Keyspace == "" {
		if r.Family != "" {
			return fmt.Errorf("family %q without a keyspace", r.Family)
		}
		return nil
	}
	if !namePattern.MatchString(r.Keyspace) {
		return fmt.Errorf("invalid keyspace name %q: 1 to 48 letters, digits or '_'", r.Keyspace)
	}
	if r.Family != "" && !namePattern.MatchString(r.Family) {
		return fmt.Errorf("invalid family name %q: 1 to 48 letters, digits or '_'", r.Family)
	}
	return nil
}

// Grant is a user's permissions on one resource.
type Grant struct {
	// Keyspace is "" for every keyspace.
	Keyspace string `json:"keyspace,omitempty"`
	// Family is "" for the whole keyspace.
	Family      string       `json:"family,omitempty"`
	Permissions []Permission `json:"permissions"`
}

// Resource is what g is on.
func (g Grant) Resource() Resource { return Resource{Keyspace: g.Keyspace, Family: g.Family} }

// check reports a grant the file may not hold.
func (g Grant) check() error {
	if err := g.Resource().Check(); err != nil {
		return err
	}
	for _, p := range g.Permissions {
		if _, err := ParsePermission(string(p)); err != nil {
			return fmt.Errorf("on %s: %w", g.Resource(), err)
		}
	}
	return nil
}

// String is the grant as `thriftd user list` shows it: "read, write on
// <keyspace ks>".
func (g Grant) String() string {
	names := make([]string, len(g.Permissions))
	for i, p := range g.Permissions {
		names[i] = string(p)
	}
	return strings.Join(names, ", ") + " on " + g.Resource().String()
}

// user returns the user name, or ErrNoUser.
func (u *Users) user(name string) (*User, error) {
	user, ok := u.Users[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoUser, name)
	}
	return user, nil
}

// SetSuperuser makes a user a superuser, or no longer one.
func (u *Users) SetSuperuser(name string, superuser bool) error {
	user, err := u.user(name)
	if err != nil {
		return err
	}
	user.Superuser = superuser
	return nil
}

// Grant gives a user permission p on r; granting what the user has
// already is no change, as in Cassandra.
func (u *Users) Grant(name string, p Permission, r Resource) error {
	user, err := u.user(name)
	if err != nil {
		return err
	}
	if _, err := ParsePermission(string(p)); err != nil {
		return err
	}
	if err := r.Check(); err != nil {
		return err
	}
	i := slices.IndexFunc(user.Grants, func(g Grant) bool { return g.Resource() == r })
	if i < 0 {
		user.Grants = append(user.Grants, Grant{Keyspace: r.Keyspace, Family: r.Family})
		i = len(user.Grants) - 1
	}
	g := &user.Grants[i]
	if !slices.Contains(g.Permissions, p) {
		g.Permissions = append(g.Permissions, p)
		slices.SortFunc(g.Permissions, func(a, b Permission) int {
			return cmp.Compare(slices.Index(Permissions, a), slices.Index(Permissions, b))
		})
	}
	slices.SortFunc(user.Grants, func(a, b Grant) int {
		return cmp.Or(cmp.Compare(a.Keyspace, b.Keyspace), cmp.Compare(a.Family, b.Family))
	})
	return nil
}

// Revoke takes permission p on r from a user; revoking what the user does
// not have is no change, as in Cassandra. A grant on a resource does not
// revoke those on resources below it.
func (u *Users) Revoke(name string, p Permission, r Resource) error {
	user, err := u.user(name)
	if err != nil {
		return err
	}
	if _, err := ParsePermission(string(p)); err != nil {
		return err
	}
	if err := r.Check(); err != nil {
		return err
	}
	i := slices.IndexFunc(user.Grants, func(g Grant) bool { return g.Resource() == r })
	if i < 0 {
		return nil
	}
	g := &user.Grants[i]
	g.Permissions = slices.DeleteFunc(g.Permissions, func(q Permission) bool { return q == p })
	if len(g.Permissions) == 0 {
		user.Grants = slices.Delete(user.Grants, i, i+1)
	}
	return nil
}

// Permitted reports whether the user name may do action, one of
// Cassandra's permissions (SELECT, MODIFY, CREATE, ALTER, DROP), on family
// of keyspace (family "" for the keyspace itself, keyspace "" for every
// keyspace): whether the user is a superuser or was granted it on that
// resource or one above it, as Cassandra's CassandraAuthorizer decides.
// An unknown user may do nothing.
func (u *Users) Permitted(name, action, keyspace, family string) bool {
	user, ok := u.Users[name]
	if !ok {
		return false
	}
	if user.Superuser {
		return true
	}
	for _, g := range user.Grants {
		switch {
		case g.Keyspace == "":
		case g.Keyspace != keyspace:
			continue
		case g.Family != "" && g.Family != family:
			continue
		}
		for _, p := range g.Permissions {
			if p.allows(action, g.Family != "") {
				return true
			}
		}
	}
	return false
}

// RevokeAllOn takes from every user the permissions on r and on what lies
// below it (the families of a keyspace), as Cassandra revokes them when a
// keyspace or a table is dropped; it reports whether any user had one.
func (u *Users) RevokeAllOn(r Resource) bool {
	changed := false
	for _, user := range u.Users {
		n := len(user.Grants)
		user.Grants = slices.DeleteFunc(user.Grants, func(g Grant) bool {
			return g.Keyspace == r.Keyspace && (r.Family == "" || g.Family == r.Family)
		})
		changed = changed || len(user.Grants) != n
	}
	return changed
}
