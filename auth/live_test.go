package auth

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// saveUsers writes users to dir as `thriftd user` does, under its lock.
func saveUsers(t testing.TB, dir string, change func(u *Users) error) {
	t.Helper()
	lock, err := LockUsers(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	u, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := change(u); err != nil {
		t.Fatal(err)
	}
	if err := u.Save(dir); err != nil {
		t.Fatal(err)
	}
}

// TestLiveSeesChanges: a running server's users follow the file: a grant,
// a new user, a password, a revoke and a deleted user are seen at the next
// look; a file that cannot be read leaves the users read last in force.
func TestLiveSeesChanges(t *testing.T) {
	dir := t.TempDir()
	saveUsers(t, dir, func(u *Users) error { return u.Add("alice", "pw") })
	var logs strings.Builder
	l, err := OpenLive(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l.interval = 0 // look at the file on every call
	l.nextCheck.Store(0)
	ctx := context.Background()
	if l.Permitted(ctx, "alice", "SELECT", "k", "cf") {
		t.Fatal("alice may read before any grant")
	}
	saveUsers(t, dir, func(u *Users) error { return u.Grant("alice", Read, Resource{Keyspace: "k"}) })
	if !l.Permitted(ctx, "alice", "SELECT", "k", "cf") {
		t.Error("the grant is not seen")
	}
	saveUsers(t, dir, func(u *Users) error { return u.Add("bob", "bob pw") })
	if !l.Authenticate("bob", "bob pw") {
		t.Error("a user added is not seen at login")
	}
	saveUsers(t, dir, func(u *Users) error { return u.SetPassword("bob", "new pw") })
	if l.Authenticate("bob", "bob pw") || !l.Authenticate("bob", "new pw") {
		t.Error("a changed password is not seen at login")
	}
	saveUsers(t, dir, func(u *Users) error { return u.Revoke("alice", Read, Resource{Keyspace: "k"}) })
	if l.Permitted(ctx, "alice", "SELECT", "k", "cf") {
		t.Error("the revoke is not seen")
	}

	saveUsers(t, dir, func(u *Users) error { return u.Grant("alice", Write, Resource{Keyspace: "k"}) })
	if !l.Permitted(ctx, "alice", "MODIFY", "k", "cf") {
		t.Error("the write grant is not seen")
	}
	if err := os.WriteFile(Path(dir), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !l.Permitted(ctx, "alice", "MODIFY", "k", "cf") || !l.Authenticate("bob", "new pw") {
		t.Error("a damaged file took the users read last away")
	}
	if !strings.Contains(logs.String(), "cannot read it") {
		t.Errorf("the damaged file is not logged:\n%s", logs.String())
	}

	if err := os.Remove(Path(dir)); err != nil {
		t.Fatal(err)
	}
	if l.Authenticate("bob", "new pw") || l.Permitted(ctx, "alice", "MODIFY", "k", "cf") {
		t.Error("users of a removed file are still in force")
	}
}

// TestLiveLooksOncePerInterval: between looks, a call does not see the
// file (which is what keeps it cheap); a login looks at once.
func TestLiveLooksOncePerInterval(t *testing.T) {
	dir := t.TempDir()
	saveUsers(t, dir, func(u *Users) error { return u.Add("alice", "pw") })
	l, err := OpenLive(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	l.interval = 1 << 62 // never again by itself
	ctx := context.Background()
	saveUsers(t, dir, func(u *Users) error { return u.SetSuperuser("alice", true) })
	if l.Permitted(ctx, "alice", "SELECT", "k", "cf") {
		t.Error("a call looked at the file before its interval")
	}
	l.Authenticate("alice", "pw")
	if !l.Permitted(ctx, "alice", "SELECT", "k", "cf") {
		t.Error("a login did not look at the file")
	}
}

// BenchmarkPermitted measures the permission check of every call: on the
// users in memory, through Live as thriftd runs it (a look at the file at
// most once per CheckInterval), and through Live looking at the file on
// every call, which is what the interval saves.
func BenchmarkPermitted(b *testing.B) {
	dir := b.TempDir()
	saveUsers(b, dir, func(u *Users) error {
		for _, name := range []string{"alice", "bob", "carol"} {
			if err := u.Add(name, "pw"); err != nil {
				return err
			}
		}
		for _, ks := range []string{"a", "b", "c", "k"} {
			if err := u.Grant("alice", Read, Resource{Keyspace: ks, Family: "cf"}); err != nil {
				return err
			}
		}
		return u.Grant("alice", Write, Resource{Keyspace: "k"})
	})
	ctx := context.Background()
	b.Run("users", func(b *testing.B) {
		u, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if !u.Permitted("alice", "MODIFY", "k", "cf") {
				b.Fatal("refused")
			}
		}
	})
	for _, c := range []struct {
		name  string
		every bool
	}{{"live", false}, {"live-stat-every-call", true}} {
		b.Run(c.name, func(b *testing.B) {
			l, err := OpenLive(dir, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			if c.every {
				l.interval = 0
				l.nextCheck.Store(0)
			}
			b.ReportAllocs()
			for b.Loop() {
				if !l.Permitted(ctx, "alice", "MODIFY", "k", "cf") {
					b.Fatal("refused")
				}
			}
		})
	}
}
