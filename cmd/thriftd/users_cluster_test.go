package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestUsersInTheCluster: with a cql:// backend the users are the
// cluster's. A thriftd with no user there refuses to start; users added
// by two concurrent `thriftd user add --backend cql://...` both survive;
// two thriftd instances on the cluster each accept them, refuse a wrong
// password, and see a grant and its revocation without a restart; a
// keyspace dropped takes its grants away in the cluster.
func TestUsersInTheCluster(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: users in the cluster need CASSANDRA_TARGET_HOSTS (host:9042 of a Cassandra 5.0 node; test/cassandra/cassandra.sh start) !!!")
	}
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	run := "tbu" + hex.EncodeToString(id[:])
	admin := cqlAdminSession(t, hosts)
	t.Cleanup(func() { dropKeyspaces(t, admin, func(name string) bool { return strings.HasPrefix(name, run+"_") }) })
	backend := []string{"--backend", "cql://" + hosts, "--cql-meta-keyspace", run + "_meta"}
	serverArgs := func() []string {
		return append([]string{"--data-dir", t.TempDir(), "--authenticator", "password", "--cql-keyspace-prefix", run + "_", "--cql-consistency", "one"}, backend...)
	}
	user := func(stdin string, args ...string) string {
		t.Helper()
		status, stdout, stderr := runUserCmd(t, stdin, append(append([]string{"user"}, args...), backend...)...)
		if status != 0 {
			t.Fatalf("thriftd user %v: exit %d: %s", args, status, stderr)
		}
		return stdout
	}

	_, addr, status, logs := startOrFail(t, serverArgs()...)
	if addr != "" || status == 0 || !strings.Contains(logs(), "no users in the cluster") {
		t.Fatalf("thriftd without users in the cluster: listening on %q, exit %d:\n%s", addr, status, logs())
	}

	// Two concurrent adds of different users: neither loses the other.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, add := range [][]string{{"root", "--superuser"}, {"alice"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(append(append([]string{"user", "add"}, add...), backend...), "\n"))
			cmd.Stdin = strings.NewReader(add[0] + " pw\n")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				errs[i] = errors.New(err.Error() + ": " + stderr.String())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent user add: %v", err)
		}
	}
	if got, want := user("", "list"), "alice\tno permissions\nroot\tsuperuser\n"; got != want {
		t.Fatalf("after two concurrent adds, user list:\n%swant:\n%s", got, want)
	}

	_, addrA := startChild(t, serverArgs()...)
	_, addrB := startChild(t, serverArgs()...)
	ctx := context.Background()
	for _, addr := range []string{addrA, addrB} {
		if err := loginAs(ctx, dialPerm(t, addr), "alice", "alice pw"); err != nil {
			t.Errorf("%s: alice's login: %v", addr, err)
		}
		var refused *cassandra.AuthenticationException
		if err := loginAs(ctx, dialPerm(t, addr), "alice", "wrong pw"); !errors.As(err, &refused) {
			t.Errorf("%s: a wrong password: %v, want AuthenticationException", addr, err)
		}
	}
	permServer{addr: addrA, superuser: "root", superPassword: "root pw"}.createKeyspace(t, "live")

	const refused = "InvalidRequestException: User USER has no SELECT permission on <table KS.cf> or any of its parents"
	pred := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 10}}
	read := func(addr string) string {
		c := dialPerm(t, addr)
		if err := loginAs(ctx, c, "alice", "alice pw"); err != nil {
			return "login: " + err.Error()
		}
		// The other instance learns of the keyspace from the cluster.
		if err := c.SetKeyspace(ctx, "live"); err != nil {
			return "set_keyspace: " + err.Error()
		}
		_, err := c.GetSlice(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: "cf"}, pred, cassandra.ConsistencyLevel_ONE)
		return permOutcome("", err, permEnv{ks: "live", other: "-", newKs: "-"}, "alice")
	}
	// awaitRead polls until a read on both instances answers want: each
	// looks at the cluster's users at most a second apart; 30 seconds is
	// ample.
	awaitRead := func(what, want string) {
		t.Helper()
		for _, addr := range []string{addrA, addrB} {
			var got string
			for range 300 {
				if got = read(addr); got == want {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if got != want {
				t.Fatalf("%s: a read on %s answers %s, want %s", what, addr, got, want)
			}
		}
	}
	awaitRead("before any grant", refused)
	user("", "grant", "alice", "read", "--keyspace", "live")
	awaitRead("after grant", "OK")
	user("", "revoke", "alice", "read", "--keyspace", "live")
	awaitRead("after revoke", refused)

	// A keyspace dropped through one instance takes its grants away in the
	// cluster (as Cassandra 3.11 does), not in a local file.
	user("", "grant", "alice", "write", "--keyspace", "live")
	permServer{addr: addrB, superuser: "root", superPassword: "root pw"}.dropKeyspaces(t, "live")
	if got, want := user("", "list"), "alice\tno permissions\nroot\tsuperuser\n"; got != want {
		t.Errorf("after the keyspace was dropped, user list:\n%swant:\n%s", got, want)
	}
}
