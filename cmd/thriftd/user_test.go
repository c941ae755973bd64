package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// runUserCmd runs thriftd's main with args in a child process, stdin as
// its standard input, and returns its exit status, standard output and
// standard error.
func runUserCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, "\n"))
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("run thriftd %v: %v", args, err)
	return 0, "", ""
}

func TestUserCommands(t *testing.T) {
	dir := t.TempDir() + "/data" // user add creates it
	run := func(stdin string, args ...string) (int, string, string) {
		return runUserCmd(t, stdin, append(args, "--data-dir", dir)...)
	}
	expect := func(what string, status int, stdout, stderr string, wantStatus int, wantOut, wantErr string) {
		t.Helper()
		if status != wantStatus || stdout != wantOut || !strings.Contains(stderr, wantErr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				what, status, stdout, stderr, wantStatus, wantOut, wantErr)
		}
	}
	s, o, e := run("first pass\n", "user", "add", "alice")
	expect("add alice", s, o, e, 0, "", "")
	s, o, e = run("other\r\n", "user", "add", "bob")
	expect("add bob (CRLF)", s, o, e, 0, "", "")
	s, o, e = run("", "user", "list")
	expect("list", s, o, e, 0, "alice\tno permissions\nbob\tno permissions\n", "")
	s, o, e = run("again\n", "user", "add", "alice")
	expect("add an existing user", s, o, e, 1, "", "user already exists: alice")
	s, o, e = run("", "user", "add", "carol")
	expect("add with no password", s, o, e, 1, "", "empty")
	s, o, e = run("\n", "user", "add", "carol")
	expect("add with an empty line", s, o, e, 1, "", "empty")
	s, o, e = run("one\ntwo\n", "user", "add", "carol")
	expect("add with two lines", s, o, e, 1, "", "more than one line")
	s, o, e = run(strings.Repeat("x", 73)+"\n", "user", "add", "carol")
	expect("add with a password too long for bcrypt", s, o, e, 1, "", "72 bytes")
	s, o, e = run("new pass\n", "user", "passwd", "alice")
	expect("passwd alice", s, o, e, 0, "", "")
	s, o, e = run("x\n", "user", "passwd", "nobody")
	expect("passwd of a missing user", s, o, e, 1, "", "no such user: nobody")
	s, o, e = run("", "user", "del", "bob")
	expect("del bob", s, o, e, 0, "", "")
	s, o, e = run("", "user", "del", "bob")
	expect("del bob twice", s, o, e, 1, "", "no such user: bob")
	s, o, e = run("", "user", "list")
	expect("list after del", s, o, e, 0, "alice\tno permissions\n", "")

	data, err := os.ReadFile(dir + "/thriftd-users.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "new pass") || strings.Contains(string(data), "first pass") || !strings.Contains(string(data), `"$2a$10$`) {
		t.Errorf("the users file holds more or less than bcrypt hashes:\n%s", data)
	}
	if st, err := os.Stat(dir + "/thriftd-users.json"); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("users file mode: %v, %v", st.Mode(), err)
	}

	// A running thriftd checks logins against them, and sees them change.
	_, addr := startChild(t, "--data-dir", dir, "--authenticator", "password")
	ctx := context.Background()
	c := dialTest(t, addr)
	creds := func(user, password string) *cassandra.AuthenticationRequest {
		return &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": user, "password": password}}
	}
	if err := c.Login(ctx, creds("alice", "first pass")); err == nil {
		t.Error("login with the old password succeeded")
	}
	if err := c.Login(ctx, creds("alice", "new pass")); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
	if _, err := c.DescribeKeyspaces(ctx); err != nil {
		t.Errorf("describe_keyspaces logged in: %v", err)
	}
	s, o, e = run("dave pass\n", "user", "add", "dave", "--superuser")
	expect("add dave while thriftd runs", s, o, e, 0, "", "")
	s, o, e = run("newer pass\n", "user", "passwd", "alice")
	expect("passwd alice while thriftd runs", s, o, e, 0, "", "")
	if err := c.Login(ctx, creds("dave", "dave pass")); err != nil {
		t.Errorf("login as a user added while thriftd runs: %v", err)
	}
	if err := c.Login(ctx, creds("alice", "new pass")); err == nil {
		t.Error("login with the password changed while thriftd runs succeeded")
	}
	if err := c.Login(ctx, creds("alice", "newer pass")); err != nil {
		t.Errorf("login with the password set while thriftd runs: %v", err)
	}
	s, o, e = run("", "user", "list")
	expect("list with a superuser", s, o, e, 0, "alice\tno permissions\ndave\tsuperuser\n", "")
}

func TestUserCommandLine(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"user"},
		{"user", "frob"},
		{"user", "add"},
		{"user", "add", "a", "b"},
		{"user", "del"},
		{"user", "passwd"},
		{"user", "list", "x"},
		{"user", "add", "bad name!"},
		{"user", "list", "--no-such-flag"},
		{"user", "grant", "alice"},
		{"user", "grant", "alice", "admin", "--keyspace", "k"},
		{"user", "grant", "alice", "READ", "--keyspace", "k"},
		{"user", "grant", "alice", "select", "--keyspace", "k"},
		{"user", "grant", "alice", "read"},
		{"user", "grant", "alice", "read", "--keyspace", "k", "--all-keyspaces"},
		{"user", "grant", "alice", "read", "--family", "cf"},
		{"user", "grant", "alice", "read", "--keyspace", "bad-name"},
		{"user", "grant", "alice", "read", "--keyspace", ""},
		{"user", "grant", "alice", "read", "--keyspace", "k", "--family", "c.f"},
		{"user", "grant", "alice", "read", "write", "--keyspace", "k"},
		{"user", "grant", "alice", "superuser", "--keyspace", "k"},
		{"user", "revoke", "alice", "write", "--keyspace", "k", "--bogus"},
		{"user", "revoke", "alice"},
		{"user", "add", "bob", "--keyspace", "k"},
		{"user", "passwd", "bob", "--superuser"},
		{"user", "del", "bob", "--all-keyspaces"},
		{"user", "list", "--superuser"},
	} {
		status, stdout, stderr := runUserCmd(t, "pw\n", append(args, "--data-dir", dir)...)
		if status != 2 || stdout != "" || !strings.Contains(stderr, "usage: thriftd user") {
			t.Errorf("thriftd %v: exit %d, stdout %q, stderr %q; want exit 2 and the usage", args, status, stdout, stderr)
		}
	}
	status, _, stderr := runUserCmd(t, "", "user", "list", "--data-dir", dir+"/missing")
	if status != 1 || !strings.Contains(stderr, "missing") {
		t.Errorf("list on a missing directory: exit %d, stderr %q", status, stderr)
	}
}

// TestUserGrants: grant and revoke change a user's permissions in the
// users file, as list shows them; a grant held already, or a revoke of
// what is not held, changes nothing, as in Cassandra.
func TestUserGrants(t *testing.T) {
	dir := t.TempDir()
	run := func(stdin string, args ...string) (int, string, string) {
		return runUserCmd(t, stdin, append(args, "--data-dir", dir)...)
	}
	step := func(what string, wantStatus int, wantOut, wantErr string, stdin string, args ...string) {
		t.Helper()
		status, stdout, stderr := run(stdin, args...)
		if status != wantStatus || stdout != wantOut || !strings.Contains(stderr, wantErr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				what, status, stdout, stderr, wantStatus, wantOut, wantErr)
		}
	}
	step("add alice", 0, "", "", "pw\n", "user", "add", "alice")
	step("add root --superuser", 0, "", "", "pw\n", "user", "add", "root", "--superuser")
	step("grant read on k", 0, "", "", "", "user", "grant", "alice", "read", "--keyspace", "k")
	step("grant read on k again", 0, "", "", "", "user", "grant", "alice", "read", "--keyspace", "k")
	step("grant write on k.cf", 0, "", "", "", "user", "grant", "alice", "write", "--keyspace", "k", "--family", "cf")
	step("grant schema everywhere", 0, "", "", "", "user", "grant", "alice", "schema", "--all-keyspaces")
	step("grant write on k", 0, "", "", "", "user", "grant", "alice", "write", "--keyspace", "k")
	step("list", 0, "alice\tschema on <all keyspaces>; read, write on <keyspace k>; write on <table k.cf>\nroot\tsuperuser\n", "", "", "user", "list")
	step("revoke read on k", 0, "", "", "", "user", "revoke", "alice", "read", "--keyspace", "k")
	step("revoke what is not held", 0, "", "", "", "user", "revoke", "alice", "read", "--keyspace", "other")
	step("revoke write on k.cf", 0, "", "", "", "user", "revoke", "alice", "write", "--keyspace", "k", "--family", "cf")
	step("list after revokes", 0, "alice\tschema on <all keyspaces>; write on <keyspace k>\nroot\tsuperuser\n", "", "", "user", "list")
	step("grant superuser", 0, "", "", "", "user", "grant", "alice", "superuser")
	step("revoke superuser", 0, "", "", "", "user", "revoke", "root", "superuser")
	step("list after superuser changes", 0, "alice\tsuperuser\nroot\tno permissions\n", "", "", "user", "list")
	step("grant to a missing user", 1, "", "no such user: nobody", "", "user", "grant", "nobody", "read", "--keyspace", "k")
	step("revoke superuser of a missing user", 1, "", "no such user: nobody", "", "user", "revoke", "nobody", "superuser")

	data, err := os.ReadFile(dir + "/thriftd-users.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"version": 2`) {
		t.Errorf("the users file is not of format 2:\n%s", data)
	}
}
