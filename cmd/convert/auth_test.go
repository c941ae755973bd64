package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
)

// The superuser of the auth node (test/cassandra/cassandra.sh).
const authUser, authPassword = "cassandra", "cassandra"

// libraryNoise are fragments of the texts of the libraries under the
// command's errors, which an error meant for a user must not show.
var libraryNoise = []string{"gocql:", "TTransportException", "goroutine ", "panic", "unable to discover protocol version", "&cassandra.", "Exception{"}

// cleanError fails the test when err is nil, lacks want or shows the
// libraries' texts.
func cleanError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %v\nwant it to say %q", what, err, w)
		}
	}
	for _, n := range libraryNoise {
		if strings.Contains(err.Error(), n) {
			t.Errorf("%s: %v\nshows the library's text %q", what, err, n)
		}
	}
	t.Logf("%s: %v", what, err)
}

// preparedStatementsBroken reports the failure of a Cassandra 3.11 run
// on Java 17 without the jamm agent: it cannot measure, so cannot
// prepare, some statements.
func preparedStatementsBroken(s string) bool {
	return strings.Contains(s, "can't get field offset on a hidden class")
}

// TestAuthenticatedCluster converts from the Thrift port of a Cassandra
// 3.11 with PasswordAuthenticator (CASSANDRA_THRIFT_AUTH) and writes to its
// CQL port (CASSANDRA_HOSTS_AUTH): without credentials or with wrong ones
// the command fails with a clear reason; with the right ones, given as
// flags or in a --credentials file, the conversion is the expected
// script and the cluster holds every cell.
func TestAuthenticatedCluster(t *testing.T) {
	thriftAddr := requireEnv(t, "CASSANDRA_THRIFT_AUTH", "converting from a Cassandra with PasswordAuthenticator", "host:port of the Thrift port of a 3.11 with PasswordAuthenticator, superuser cassandra/cassandra")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := fixtures.Load("blog")
	if err != nil {
		t.Fatal(err)
	}
	keyspace := "tb_auth_" + runID(t)
	login := thriftsource.ConnOptions{Username: authUser, Password: authPassword}
	if err := loadFixture(ctx, thriftAddr, m, keyspace, login); err != nil {
		t.Fatal(err)
	}
	dropThriftKeyspaceLater(t, thriftAddr, keyspace, login)
	from := "thrift://" + thriftAddr + "/" + keyspace
	now := strconv.FormatInt(m.Now.Unix(), 10)
	dir := t.TempDir()
	script := filepath.Join(dir, "blog.cql")
	data := func(extra ...string) error {
		args := append([]string{"data", "--from", from, "--to", "file:" + script, "--keyspace", m.Keyspace.Name, "--now", now, "--quiet"}, extra...)
		_, _, err := liveConvert(ctx, args...)
		return err
	}

	cleanError(t, "no credentials", data(), "authentication failed", "requires a login", "--from-username")
	cleanError(t, "wrong password", data("--username", authUser, "--password", "wrong"), "authentication failed", "incorrect")
	cleanError(t, "unknown user", data("--from-username", "nobody", "--from-password", "x"), "authentication failed")

	if err := data("--username", authUser, "--password", authPassword); err != nil {
		t.Fatalf("right credentials as flags: %v", err)
	}
	sameAsGoldenButColumnOrder(t, m, fixtures.AutoShape, script, keyspace)

	creds := filepath.Join(dir, "credentials.yaml")
	if err := os.WriteFile(creds, []byte("from:\n  username: "+authUser+"\n  password: "+authPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := data("--credentials", creds); err != nil {
		t.Fatalf("right credentials in --credentials: %v", err)
	}
	sameAsGoldenButColumnOrder(t, m, fixtures.AutoShape, script, keyspace)

	t.Run("cql-target", func(t *testing.T) {
		hosts := requireEnv(t, "CASSANDRA_HOSTS_AUTH", "writing to a Cassandra with PasswordAuthenticator", "host:port of the CQL port of a 3.11 with PasswordAuthenticator, superuser cassandra/cassandra")
		// The same node holds the source: a keyspace of its own.
		target := keyspace + "_cql"
		to := "cql://" + hosts + "/" + target
		both := filepath.Join(dir, "both.yaml")
		if err := os.WriteFile(both, []byte("username: "+authUser+"\npassword: "+authPassword+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet",
			"--credentials", both, "--to-password", "wrong")
		cleanError(t, "wrong target password", err, "--to "+to, "authentication failed", "incorrect", "--to-username")
		_, _, err = liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet", "--from-username", authUser, "--from-password", authPassword)
		cleanError(t, "no target credentials", err, "authentication failed", "requires a login")

		dropCQLKeyspaceLater(t, hosts, authUser, authPassword, target)
		_, stderr, err := liveConvert(ctx, "data", "--no-metadata", "--from", from, "--to", to, "--now", now, "--quiet", "--credentials", both)
		if err != nil && preparedStatementsBroken(err.Error()+stderr) {
			t.Skipf("!!! SKIPPED: the Cassandra 3.11 at %s cannot prepare statements on this JDK (%v): start it with -javaagent:jamm-0.3.0.jar !!!", hosts, err)
		}
		if err != nil {
			t.Fatalf("convert into %s: %v\n%s", to, err, stderr)
		}
		out, stderr, err := liveConvert(ctx, "verify", "--from", from, "--to", to, "--now", now, "--tolerance", "30s", "--credentials", both)
		if err != nil || !strings.Contains(out, "OK:") {
			t.Fatalf("verify: %v\n%s%s", err, out, stderr)
		}
	})
}
