package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/daemon"
)

const userUsage = `usage: thriftd user COMMAND [NAME [PERMISSION]] [flags] [--data-dir DIR]

Manages the users of a data directory for --authenticator password, and
what each may do (Cassandra's CassandraAuthorizer). A running thriftd
sees a change at the next login, and on other calls within a second:

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
func parseUser(args []string, stderr io.Writer) (userCommand, string, error) {
	fs := flag.NewFlagSet("thriftd user", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", daemon.DefaultDataDir, "the data directory of thriftd")
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
				return userCommand{}, "", err
			}
			return userCommand{}, "", usageError{err: err, reported: true}
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	wrong := func(format string, a ...any) (userCommand, string, error) {
		fs.Usage()
		return userCommand{}, "", usageError{err: fmt.Errorf("user: "+format, a...)}
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
		if name != "data-dir" && !slices.Contains(allowed, name) {
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
	return uc, *dataDir, nil
}

// runUser runs `thriftd user ...` (args after "user"). It may run while a
// thriftd serves the data directory: the users file is replaced whole,
// and the writers take turns (auth.LockUsers).
func runUser(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	uc, dir, err := parseUser(args, stderr)
	if err != nil {
		return err
	}
	if uc.cmd == "add" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	} else if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, userLockTimeout)
	defer cancel()
	lock, err := auth.LockUsers(ctx, dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	users, err := auth.Load(dir)
	if err != nil {
		return err
	}
	switch uc.cmd {
	case "list":
		for _, name := range users.Names() {
			fmt.Fprintf(stdout, "%s\t%s\n", name, describeUser(users.Users[name]))
		}
		return nil
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
	case "add", "passwd":
		if uc.cmd == "add" {
			if _, ok := users.Users[uc.name]; ok {
				return fmt.Errorf("%w: %s (use thriftd user passwd to change the password)", auth.ErrUserExists, uc.name)
			}
		} else if _, ok := users.Users[uc.name]; !ok {
			return fmt.Errorf("%w: %s", auth.ErrNoUser, uc.name)
		}
		password, perr := readPassword(stdin)
		if perr != nil {
			return perr
		}
		if uc.cmd == "add" {
			err = users.Add(uc.name, password)
			if err == nil {
				err = users.SetSuperuser(uc.name, uc.superuser)
			}
		} else {
			err = users.SetPassword(uc.name, password)
		}
	}
	if err != nil {
		return err
	}
	return users.Save(dir)
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
