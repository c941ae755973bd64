package cqlconn

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

func TestParseHosts(t *testing.T) {
	good := map[string][]string{
		"db1":                       {"db1:9042"},
		"db1:9043":                  {"db1:9043"},
		"127.0.0.1:1,127.0.0.2":     {"127.0.0.1:1", "127.0.0.2:9042"},
		"[::1]:9042, ::1":           {"[::1]:9042", "[::1]:9042"},
		"db1.example.com:19042,db2": {"db1.example.com:19042", "db2:9042"},
	}
	for in, want := range good {
		got, err := ParseHosts(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseHosts(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "db1,", "db1:", "db1:x", "db1:70000", "db1/ks", ":9042"} {
		if got, err := ParseHosts(in); err == nil {
			t.Errorf("ParseHosts(%q) = %q; want an error", in, got)
		}
	}
}

func TestSettingsOverAndCredentials(t *testing.T) {
	path := filepath.Join(t.TempDir(), "creds.yaml")
	if err := os.WriteFile(path, []byte("username: file\npassword: pw\ntls_ca: /ca.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var file Settings
	perm, err := ReadCredentials(path, &file)
	if err != nil || perm != 0o600 {
		t.Fatalf("ReadCredentials: %v, %v", perm, err)
	}
	got := file.Over(Settings{Username: "flag"})
	if want := (Settings{Username: "flag", Password: "pw", TLSCA: "/ca.pem"}); got != want {
		t.Errorf("Over: %+v, want %+v", got, want)
	}
	if !got.UsesTLS() {
		t.Error("a CA file does not turn TLS on")
	}
	if err := os.WriteFile(path, []byte("usernme: typo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCredentials(path, &file); err == nil || !strings.Contains(err.Error(), "usernme") {
		t.Errorf("a misspelt key: %v", err)
	}
	if err := (Settings{Password: "pw"}).Check("cluster"); err == nil {
		t.Error("a password without a user name is accepted")
	}
}

// TestNewSession connects to the real clusters of the environment: a
// local data center the cluster lacks and a refused login are errors
// that say so.
func TestNewSession(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: cqlconn's session tests need CASSANDRA_TARGET_HOSTS (test/cassandra/cassandra.sh start) !!!")
	}
	hs, err := ParseHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(Config{Hosts: hs, Consistency: gocql.One, Timeout: 10 * time.Second, TokenAware: true})
	if err != nil {
		t.Fatalf("token-aware session: %v", err)
	}
	s.Close()
	_, err = NewSession(Config{Hosts: hs, Consistency: gocql.One, Timeout: 10 * time.Second, LocalDC: "no-such-dc"})
	if err == nil || !strings.Contains(err.Error(), `local data center "no-such-dc" has no node`) {
		t.Errorf("an unknown local data center: %v", err)
	}
	if auth := os.Getenv("CASSANDRA_HOSTS_AUTH"); auth != "" {
		ah, err := ParseHosts(auth)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewSession(Config{Hosts: ah, Consistency: gocql.One, Timeout: 10 * time.Second, Username: "cassandra", Password: "wrong"})
		if !errors.Is(err, ErrAuthentication) {
			t.Errorf("a wrong password: %v, want ErrAuthentication", err)
		}
	}
}
