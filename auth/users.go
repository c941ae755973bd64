package auth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// UsersFile is the name of the users file in the data directory.
const UsersFile = "thriftd-users.json"

// Cost is the bcrypt cost of new hashes, Cassandra's (2^10 rounds).
const Cost = 10

// MaxPasswordLen is the longest password bcrypt can hash, in bytes.
const MaxPasswordLen = 72

// usersFileVersion is the format of the file Save writes; a file of a
// later format is refused rather than rewritten without what it does not
// know. Version 1 had no permissions: its users could do everything, so
// they load as superusers (and are saved so).
const (
	usersFileVersion   = 2
	usersFileVersionV1 = 1
)

// User is one user of the file.
type User struct {
	// Hash is the salted bcrypt hash of the password.
	Hash string `json:"hash"`
	// Superuser users have every permission.
	Superuser bool `json:"superuser,omitempty"`
	// Grants are the user's permissions, sorted by resource.
	Grants []Grant `json:"grants,omitempty"`
}

// Users is the content of a users file.
type Users struct {
	Version int              `json:"version"`
	Users   map[string]*User `json:"users"`
}

// ErrNoUser is the error of an operation on a user that does not exist.
var ErrNoUser = errors.New("no such user")

// ErrUserExists is the error of adding a user that exists.
var ErrUserExists = errors.New("user already exists")

var userNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,128}$`)

// CheckName reports whether name can be a user name: 1 to 128 letters,
// digits, '_', '.', '@' or '-'.
func CheckName(name string) error {
	if !userNamePattern.MatchString(name) {
		return fmt.Errorf("invalid user name %q: use 1 to 128 letters, digits, '_', '.', '@' or '-'", name)
	}
	return nil
}

// CheckPassword reports whether password can be hashed: not empty, at
// most MaxPasswordLen bytes, no line break.
func CheckPassword(password string) error {
	switch {
	case password == "":
		return errors.New("the password is empty")
	case len(password) > MaxPasswordLen:
		return fmt.Errorf("the password is longer than %d bytes, the most bcrypt can hash", MaxPasswordLen)
	case strings.ContainsAny(password, "\r\n"):
		return errors.New("the password holds a line break")
	}
	return nil
}

// Path is the users file of the data directory dir.
func Path(dir string) string { return filepath.Join(dir, UsersFile) }

// Load reads the users of the data directory dir; a directory without a
// users file has none.
func Load(dir string) (*Users, error) {
	data, err := os.ReadFile(Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return NewUsers(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read users: %w", err)
	}
	return ParseUsers(data, "file "+Path(dir))
}

// Save writes the users to the data directory dir atomically, readable by
// its owner only.
func (u *Users) Save(dir string) error {
	data, err := u.Marshal()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, UsersFile+".tmp*")
	if err != nil {
		return fmt.Errorf("write users: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write users: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write users: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write users: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write users: %w", err)
	}
	if err := os.Rename(tmp.Name(), Path(dir)); err != nil {
		return fmt.Errorf("write users: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("write users: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write users: sync %s: %w", dir, err)
	}
	return nil
}

// Names returns the user names, sorted.
func (u *Users) Names() []string {
	names := make([]string, 0, len(u.Users))
	for name := range u.Users {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Add adds a user with a password and no permission.
func (u *Users) Add(name, password string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if _, ok := u.Users[name]; ok {
		return fmt.Errorf("%w: %s", ErrUserExists, name)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	u.Users[name] = &User{Hash: hash}
	return nil
}

// SetPassword changes a user's password.
func (u *Users) SetPassword(name, password string) error {
	user, ok := u.Users[name]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoUser, name)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	user.Hash = hash
	return nil
}

// Delete removes a user.
func (u *Users) Delete(name string) error {
	if _, ok := u.Users[name]; !ok {
		return fmt.Errorf("%w: %s", ErrNoUser, name)
	}
	delete(u.Users, name)
	return nil
}

func hashPassword(password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), Cost)
	if err != nil {
		return "", fmt.Errorf("hash the password: %w", err)
	}
	return string(hash), nil
}

// dummyHash is compared against when the user is unknown, so that a wrong
// user name takes as long to refuse as a wrong password: a hash of cost
// Cost of a random password nobody kept. A literal rather than a hash
// made at start-up, which cost every process that links this package
// (thriftd, each `thriftd user` command) a bcrypt round at init.
const dummyHash = "$2a$10$Se/dQdf/G/JFSFAE0U2PB.Q1NbMzuW6ftw5gY1fv6mNYov1nS4fS6"

// Authenticate reports whether password is user's (legacy.Authenticator).
func (u *Users) Authenticate(name, password string) bool {
	user, ok := u.Users[name]
	if !ok {
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(user.Hash), []byte(password)) == nil
}
