package auth

import (
	"os"
	"strings"
	"testing"
)

// usersWith returns users holding one user, alice, with the grants.
func usersWith(t *testing.T, grants ...func(u *Users) error) *Users {
	t.Helper()
	u := &Users{Version: usersFileVersion, Users: map[string]*User{"alice": {Hash: "unused"}}}
	for _, g := range grants {
		if err := g(u); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func grant(p Permission, ks, cf string) func(u *Users) error {
	return func(u *Users) error { return u.Grant("alice", p, Resource{Keyspace: ks, Family: cf}) }
}

// TestPermitted: a grant holds on its resource and those below it, as
// Cassandra's data resources; schema on a family is ALTER and DROP only.
func TestPermitted(t *testing.T) {
	type check struct {
		action, ks, cf string
		want           bool
	}
	cases := []struct {
		name   string
		grants []func(u *Users) error
		checks []check
	}{
		{"none", nil, []check{
			{"SELECT", "k", "cf", false}, {"MODIFY", "k", "cf", false}, {"CREATE", "", "", false}, {"CREATE", "k", "", false},
		}},
		{"read on k", []func(u *Users) error{grant(Read, "k", "")}, []check{
			{"SELECT", "k", "cf", true}, {"SELECT", "k", "other", true}, {"SELECT", "k2", "cf", false},
			{"SELECT", "K", "cf", false}, // keyspace names are case-sensitive in Thrift
			{"MODIFY", "k", "cf", false}, {"SELECT", "", "", false},
		}},
		{"write on k.cf", []func(u *Users) error{grant(Write, "k", "cf")}, []check{
			{"MODIFY", "k", "cf", true}, {"MODIFY", "k", "cnt", false}, {"MODIFY", "k", "", false}, {"SELECT", "k", "cf", false},
		}},
		{"schema on k", []func(u *Users) error{grant(Schema, "k", "")}, []check{
			{"CREATE", "k", "", true}, {"ALTER", "k", "", true}, {"DROP", "k", "", true}, {"ALTER", "k", "cf", true},
			{"DROP", "k", "cf", true}, {"CREATE", "", "", false}, {"SELECT", "k", "cf", false}, {"DROP", "k2", "", false},
		}},
		{"schema on k.cf", []func(u *Users) error{grant(Schema, "k", "cf")}, []check{
			{"ALTER", "k", "cf", true}, {"DROP", "k", "cf", true}, {"CREATE", "k", "", false}, {"DROP", "k", "", false},
			{"ALTER", "k", "cnt", false},
		}},
		{"schema on every keyspace", []func(u *Users) error{grant(Schema, "", "")}, []check{
			{"CREATE", "", "", true}, {"CREATE", "any", "", true}, {"DROP", "any", "cf", true}, {"MODIFY", "any", "cf", false},
		}},
		{"superuser", []func(u *Users) error{func(u *Users) error { return u.SetSuperuser("alice", true) }}, []check{
			{"SELECT", "k", "cf", true}, {"MODIFY", "k", "cf", true}, {"CREATE", "", "", true}, {"DROP", "k", "", true},
		}},
	}
	for _, c := range cases {
		u := usersWith(t, c.grants...)
		for _, ch := range c.checks {
			if got := u.Permitted("alice", ch.action, ch.ks, ch.cf); got != ch.want {
				t.Errorf("%s: %s on %s: %v, want %v", c.name, ch.action, Resource{ch.ks, ch.cf}, got, ch.want)
			}
		}
		if u.Permitted("bob", "SELECT", "k", "cf") {
			t.Errorf("%s: an unknown user is permitted", c.name)
		}
	}
}

// TestGrantRevoke: grants are kept once, sorted, and revoked one
// permission at a time; a revoke of what is not held changes nothing.
func TestGrantRevoke(t *testing.T) {
	u := usersWith(t, grant(Write, "k", ""), grant(Read, "k", ""), grant(Read, "k", ""), grant(Read, "a", "cf"), grant(Schema, "", ""))
	var got []string
	for _, g := range u.Users["alice"].Grants {
		got = append(got, g.String())
	}
	if want := "schema on <all keyspaces>|read on <table a.cf>|read, write on <keyspace k>"; strings.Join(got, "|") != want {
		t.Errorf("grants %q, want %q", strings.Join(got, "|"), want)
	}
	for _, r := range []struct {
		p  Permission
		ks string
	}{{Read, "k"}, {Write, "k"}, {Write, "nowhere"}, {Schema, ""}} {
		if err := u.Revoke("alice", r.p, Resource{Keyspace: r.ks}); err != nil {
			t.Fatal(err)
		}
	}
	if g := u.Users["alice"].Grants; len(g) != 1 || g[0].String() != "read on <table a.cf>" {
		t.Errorf("after the revokes: %v", g)
	}
	for _, err := range []error{
		u.Grant("nobody", Read, Resource{Keyspace: "k"}),
		u.Revoke("nobody", Read, Resource{Keyspace: "k"}),
		u.SetSuperuser("nobody", true),
	} {
		if err == nil || !strings.Contains(err.Error(), "no such user") {
			t.Errorf("a change of a missing user: %v", err)
		}
	}
	for _, r := range []Resource{{Keyspace: "bad-name"}, {Family: "cf"}, {Keyspace: "k", Family: "c.f"}, {Keyspace: strings.Repeat("k", 49)}} {
		if err := u.Grant("alice", Read, r); err == nil {
			t.Errorf("grant on %+v accepted", r)
		}
	}
	if err := u.Grant("alice", "select", Resource{Keyspace: "k"}); err == nil {
		t.Error("grant of an unknown permission accepted")
	}
}

// TestLoadFormats: a format 1 file (before permissions) loads with its
// users superusers, as they could do everything; it is saved in format
// 2, which loads as saved; a later format, or a grant the file may not
// hold, is refused.
func TestLoadFormats(t *testing.T) {
	dir := t.TempDir()
	v1 := `{"version": 1, "users": {"alice": {"hash": "$2a$10$abcdefghijklmnopqrstuu5T0yq2ETc0iKQ6mrpY2Oz9Ts/3nHBRK"}}}`
	if err := os.WriteFile(Path(dir), []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Users["alice"].Superuser || u.Version != usersFileVersion {
		t.Errorf("format 1 user: %+v, version %d", u.Users["alice"], u.Version)
	}
	if err := u.Add("bob", "pw"); err != nil {
		t.Fatal(err)
	}
	if err := u.Grant("bob", Write, Resource{Keyspace: "k", Family: "cf"}); err != nil {
		t.Fatal(err)
	}
	if err := u.Save(dir); err != nil {
		t.Fatal(err)
	}
	again, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Users["alice"].Superuser || again.Users["bob"].Superuser || len(again.Users["bob"].Grants) != 1 ||
		!again.Permitted("bob", "MODIFY", "k", "cf") {
		t.Errorf("format 2 round trip: alice %+v, bob %+v", again.Users["alice"], again.Users["bob"])
	}
	for content, want := range map[string]string{
		`{"version": 3, "users": {}}`: "format version 3",
		`{"version": 2, "users": {"a": {"hash": "h", "grants": [{"keyspace": "k", "permissions": ["select"]}]}}}`: "unknown permission",
		`{"version": 2, "users": {"a": {"hash": "h", "grants": [{"family": "cf", "permissions": ["read"]}]}}}`:    "without a keyspace",
	} {
		if err := os.WriteFile(Path(dir), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load %s: %v, want an error with %q", content, err, want)
		}
	}
}

// TestRevokeAllOn: a dropped family takes its grants with it; a dropped
// keyspace those on it and on its families; the others stay.
func TestRevokeAllOn(t *testing.T) {
	u := usersWith(t, grant(Read, "k", ""), grant(Read, "k", "cf"), grant(Write, "k", "cnt"), grant(Read, "k2", "cf"), grant(Schema, "", ""))
	if !u.RevokeAllOn(Resource{Keyspace: "k", Family: "cf"}) || u.Permitted("alice", "SELECT", "k2", "cnt") {
		t.Fatal("nothing revoked on k.cf, or too much")
	}
	if !u.Permitted("alice", "SELECT", "k", "cf") || !u.Permitted("alice", "MODIFY", "k", "cnt") || !u.Permitted("alice", "SELECT", "k2", "cf") {
		t.Error("revoking on k.cf took other grants")
	}
	if u.RevokeAllOn(Resource{Keyspace: "k", Family: "cf"}) {
		t.Error("a second revoke on k.cf changed something")
	}
	if !u.RevokeAllOn(Resource{Keyspace: "k"}) {
		t.Fatal("nothing revoked on k")
	}
	var got []string
	for _, g := range u.Users["alice"].Grants {
		got = append(got, g.String())
	}
	if want := "schema on <all keyspaces>|read on <table k2.cf>"; strings.Join(got, "|") != want {
		t.Errorf("after the keyspace drop: %q, want %q", strings.Join(got, "|"), want)
	}
}
