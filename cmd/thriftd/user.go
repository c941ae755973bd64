package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/daemon"
)

const userUsage = `usage: thriftd user COMMAND [NAME [PERMISSION]] [flags] [--data-dir DIR | --backend cql://HOST:PORT [--cql-* ...]] [--config FILE]

Manages the users for --authenticator password, and what each may do
(Cassandra's CassandraAuthorizer): those of a data directory, or with
--backend cql://... (and the server's --cql-* settings, or its --config
file) those of the cluster, shared by every thriftd on it. A running
thriftd sees a change at the next login, and on other calls within a
second:

  add NAME [--superuser]
        add a user, a superuser with --superuser; the password is read
        from standard input (one line)
  passwd NAME
        change a user's password, read from standard input (one line)
  del NAME
        delete a user
  grant NAME PERMISSION (--keyspace KS [--family CF] | --all-keyspaces)
        give a user a permission on a keyspace, one family of it, or every
        keyspace: read (Cassandra's SELECT), write (MODIFY) or schema
        (CREATE, ALTER, DROP; ALTER and DROP on a family)
  revoke NAME PERMISSION (--keyspace KS [--family CF] | --all-keyspaces)
        take it back
  grant NAME superuser, revoke NAME superuser
        make a user a superuser (every permission), or no longer one
  list
        list the users, one a line: the name, a tab, and "superuser" or
        the permissions

Flags:
`

// maxPasswordInput bounds what is read of standard input for a password.
const maxPasswordInput = 4096

// userLockTimeout bounds the wait for another user command to finish.
const userLockTimeout = 30 * time.Second

// userCommand is a parsed `thriftd user` command line.
type userCommand struct {
	cmd, name  string
	superuser  bool            // add --superuser
	permission auth.Permission // grant, revoke: "" for superuser
	resource   auth.Resource
}

// parseUser parses the arguments of `thriftd user`, strictly: a wrong
// command line is a usageError, reported with the usage.
func parseUser(args []string, stderr io.Writer) (userCommand, daemon.Config, error) {
	fs := flag.NewFlagSet("thriftd user", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The server's flags and --config say where the users are: --data-dir,
	// or --backend cql://... and the --cql-* settings.
	var values daemon.Config
	flags := daemon.RegisterFlags(fs, &values)
	serverFlags := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { serverFlags[f.Name] = true })
	superuser := fs.Bool("superuser", false, "add: the user is a superuser")
	keyspace := fs.String("keyspace", "", "grant, revoke: the keyspace")
	family := fs.String("family", "", "grant, revoke: a family of the keyspace, rather than all of it")
	allKeyspaces := fs.Bool("all-keyspaces", false, "grant, revoke: every keyspace")
	fs.Usage = func() {
		fmt.Fprint(stderr, userUsage)
		fs.PrintDefaults()
	}
	// Flags may come before or after the command and the names.
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return userCommand{}, daemon.Config{}, err
			}
			return userCommand{}, daemon.Config{}, usageError{err: err, reported: true}
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	wrong := func(format string, a ...any) (userCommand, daemon.Config, error) {
		fs.Usage()
		return userCommand{}, daemon.Config{}, usageError{err: fmt.Errorf("user: "+format, a...)}
	}
	if len(words) == 0 {
		return wrong("missing command (add, passwd, del, grant, revoke or list)")
	}
	uc := userCommand{cmd: words[0]}
	args = words[1:]
	var allowed []string
	switch uc.cmd {
	case "add", "passwd", "del":
		if len(args) != 1 {
			return wrong("%s takes one user name, got %d", uc.cmd, len(args))
		}
		if uc.cmd == "add" {
			allowed = []string{"superuser"}
		}
	case "grant", "revoke":
		if len(args) != 2 {
			return wrong("%s takes a user name and a permission (read, write, schema or superuser), got %d arguments", uc.cmd, len(args))
		}
		if args[1] != "superuser" {
			p, err := auth.ParsePermission(args[1])
			if err != nil {
				return wrong("%s: %v, or superuser", uc.cmd, err)
			}
			uc.permission = p
			allowed = []string{"keyspace", "family", "all-keyspaces"}
			switch {
			case set["keyspace"] == *allKeyspaces:
				return wrong("%s %s needs either --keyspace KS (with --family CF for one family) or --all-keyspaces", uc.cmd, p)
			case set["family"] && !set["keyspace"]:
				return wrong("--family needs --keyspace")
			}
			uc.resource = auth.Resource{Keyspace: *keyspace, Family: *family}
			if err := uc.resource.Check(); err != nil || (set["keyspace"] && *keyspace == "") || (set["family"] && *family == "") {
				if err == nil {
					err = errors.New("empty keyspace or family name")
				}
				return wrong("%s: %v", uc.cmd, err)
			}
		}
	case "list":
		if len(args) != 0 {
			return wrong("list takes no argument")
		}
	default:
		return wrong("unknown command %q (add, passwd, del, grant, revoke or list)", uc.cmd)
	}
	for name := range set {
		if !serverFlags[name] && !slices.Contains(allowed, name) {
			return wrong("--%s does not go with %s", name, strings.Join(words[:min(len(words), 3)], " "))
		}
	}
	if len(args) > 0 {
		uc.name = args[0]
		if err := auth.CheckName(uc.name); err != nil {
			return wrong("%v", err)
		}
	}
	uc.superuser = *superuser
	cfg, err := flags.Resolve()
	if err != nil {
		fs.Usage()
		return userCommand{}, daemon.Config{}, usageError{err: fmt.Errorf("user: %w", err)}
	}
	return uc, cfg, nil
}

// runUser runs `thriftd user ...` (args after "user"). It may run while
// thriftd serves the users: the users file is replaced whole and its
// writers take turns (auth.LockUsers); the cluster's users row is changed
// by a lightweight transaction on its version (auth/cqlusers).
func runUser(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	uc, cfg, err := parseUser(args, stderr)
	if err != nil {
		return err
	}
	if b, err := cfg.BackendSpec(); err == nil && b.Kind != daemon.BackendCQL {
		dir := cfg.StoreDir()
		if uc.cmd == "add" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("data directory: %w", err)
			}
		} else if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, userLockTimeout)
	defer cancel()
	store, closeStore, err := daemon.OpenUsersStore(ctx, cfg, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	defer closeStore()
	users, _, err := store.Load(ctx)
	if err != nil {
		return err
	}
	var password string
	switch uc.cmd {
	case "list":
		for _, name := range users.Names() {
			fmt.Fprintf(stdout, "%s\t%s\n", name, describeUser(users.Users[name]))
		}
		return nil
	case "add", "passwd":
		if err := checkExists(users, uc); err != nil {
			return err
		}
		if password, err = readPassword(stdin); err != nil {
			return err
		}
	}
	return store.Update(ctx, func(users *auth.Users) (bool, error) {
		var err error
		switch uc.cmd {
		case "del":
			err = users.Delete(uc.name)
		case "grant", "revoke":
			grant := uc.cmd == "grant"
			switch {
			case uc.permission == "":
				err = users.SetSuperuser(uc.name, grant)
			case grant:
				err = users.Grant(uc.name, uc.permission, uc.resource)
			default:
				err = users.Revoke(uc.name, uc.permission, uc.resource)
			}
		case "add":
			if err = checkExists(users, uc); err == nil {
				if err = users.Add(uc.name, password); err == nil {
					err = users.SetSuperuser(uc.name, uc.superuser)
				}
			}
		case "passwd":
			if err = checkExists(users, uc); err == nil {
				err = users.SetPassword(uc.name, password)
			}
		}
		return err == nil, err
	})
}

// checkExists refuses to add a user that exists, or to change the
// password of one that does not.
func checkExists(users *auth.Users, uc userCommand) error {
	_, ok := users.Users[uc.name]
	switch {
	case uc.cmd == "add" && ok:
		return fmt.Errorf("%w: %s (use thriftd user passwd to change the password)", auth.ErrUserExists, uc.name)
	case uc.cmd == "passwd" && !ok:
		return fmt.Errorf("%w: %s", auth.ErrNoUser, uc.name)
	}
	return nil
}

// describeUser is what `thriftd user list` shows of a user after the
// name: superuser, the grants, or that it has none.
func describeUser(u *auth.User) string {
	if u.Superuser {
		return "superuser"
	}
	if len(u.Grants) == 0 {
		return "no permissions"
	}
	parts := make([]string, len(u.Grants))
	for i, g := range u.Grants {
		parts[i] = g.String()
	}
	return strings.Join(parts, "; ")
}

// readPassword reads a password from standard input: one line, its line
// ending dropped; nothing may follow it.
func readPassword(stdin io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, maxPasswordInput+1))
	if err != nil {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	if len(data) > maxPasswordInput {
		return "", errors.New("standard input holds more than a password (one line)")
	}
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(rest) > 0 {
		return "", errors.New("standard input holds more than one line; the password is one line")
	}
	if len(line) == 0 {
		return "", errors.New("the password read from standard input is empty")
	}
	if err := auth.CheckPassword(string(line)); err != nil {
		return "", err
	}
	return string(line), nil
}
