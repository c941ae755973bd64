package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/daemon"
)

const userUsage = `usage: thriftd user COMMAND [NAME] [--data-dir DIR]

Manages the users of a data directory, for --authenticator password, while
no thriftd runs on it:

  add NAME      add a user; the password is read from standard input (one line)
  passwd NAME   change a user's password, read from standard input (one line)
  del NAME      delete a user
  list          list the users, one name a line

Flags:
`

// maxPasswordInput bounds what is read of standard input for a password.
const maxPasswordInput = 4096

// runUser runs `thriftd user ...` (args after "user").
func runUser(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("thriftd user", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", daemon.DefaultDataDir, "the data directory of thriftd")
	fs.Usage = func() {
		fmt.Fprint(stderr, userUsage)
		fs.PrintDefaults()
	}
	// Flags may come before or after the command and the name.
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{err: err, reported: true}
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	wrong := func(format string, a ...any) error {
		fs.Usage()
		return usageError{err: fmt.Errorf("user: "+format, a...)}
	}
	if len(words) == 0 {
		return wrong("missing command (add, passwd, del or list)")
	}
	cmd, names := words[0], words[1:]
	switch cmd {
	case "add", "passwd", "del":
		if len(names) != 1 {
			return wrong("%s takes one user name, got %d", cmd, len(names))
		}
		if err := auth.CheckName(names[0]); err != nil {
			return wrong("%v", err)
		}
	case "list":
		if len(names) != 0 {
			return wrong("list takes no argument")
		}
	default:
		return wrong("unknown command %q (add, passwd, del or list)", cmd)
	}
	dir := *dataDir
	if cmd != "add" {
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	lock, err := auth.LockDir(dir)
	if err != nil {
		if errors.Is(err, auth.ErrLocked) {
			return fmt.Errorf("data directory %s is in use by a running thriftd (%w); stop it to manage its users", dir, err)
		}
		return err
	}
	defer lock.Unlock()
	users, err := auth.Load(dir)
	if err != nil {
		return err
	}
	switch cmd {
	case "list":
		for _, name := range users.Names() {
			fmt.Fprintln(stdout, name)
		}
		return nil
	case "del":
		if err := users.Delete(names[0]); err != nil {
			return err
		}
	case "add", "passwd":
		if cmd == "add" {
			if _, ok := users.Users[names[0]]; ok {
				return fmt.Errorf("%w: %s (use thriftd user passwd to change the password)", auth.ErrUserExists, names[0])
			}
		} else if _, ok := users.Users[names[0]]; !ok {
			return fmt.Errorf("%w: %s", auth.ErrNoUser, names[0])
		}
		password, err := readPassword(stdin)
		if err != nil {
			return err
		}
		if cmd == "add" {
			err = users.Add(names[0], password)
		} else {
			err = users.SetPassword(names[0], password)
		}
		if err != nil {
			return err
		}
	}
	return users.Save(dir)
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
