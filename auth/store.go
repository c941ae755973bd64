package auth

import (
	"context"
	"encoding/json"
	"fmt"
)

// Store is where the users document is kept: the users file of a data
// directory (FileStore) or a row of the cluster with the CQL backend
// (package auth/cqlusers).
type Store interface {
	// Stamp tells one version of the document from another; "" is no
	// document. It costs less than Load.
	Stamp(ctx context.Context) (string, error)
	// Load reads the document and its stamp; no document is no users.
	Load(ctx context.Context) (*Users, string, error)
	// Update reads the document, applies change and writes it back if
	// change reports a change, so that two writers never lose each
	// other's change.
	Update(ctx context.Context, change func(*Users) (bool, error)) error
	// String names the store in messages.
	String() string
}

// ParseUsers reads a users document (the users file's JSON); where names
// it in errors.
func ParseUsers(data []byte, where string) (*Users, error) {
	u := &Users{Version: usersFileVersion, Users: map[string]*User{}}
	if err := json.Unmarshal(data, u); err != nil {
		return nil, fmt.Errorf("users %s: %w", where, err)
	}
	switch u.Version {
	case usersFileVersion:
	case usersFileVersionV1:
		// Before permissions, a user could do everything.
		for _, user := range u.Users {
			if user != nil {
				user.Superuser = true
			}
		}
		u.Version = usersFileVersion
	default:
		return nil, fmt.Errorf("users %s: format version %d, this thriftd knows %d and %d", where, u.Version, usersFileVersionV1, usersFileVersion)
	}
	if u.Users == nil {
		u.Users = map[string]*User{}
	}
	for name, user := range u.Users {
		if user == nil || user.Hash == "" {
			return nil, fmt.Errorf("users %s: user %q has no password hash", where, name)
		}
		for _, g := range user.Grants {
			if err := g.check(); err != nil {
				return nil, fmt.Errorf("users %s: user %q: %w", where, name, err)
			}
		}
	}
	return u, nil
}

// NewUsers is an empty users document.
func NewUsers() *Users { return &Users{Version: usersFileVersion, Users: map[string]*User{}} }

// Marshal is the document as the users file holds it.
func (u *Users) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// FileStore is the users file of a data directory.
type FileStore struct{ Dir string }

// Stamp is the file's inode, size and modification time.
func (f FileStore) Stamp(context.Context) (string, error) {
	st, err := statUsers(f.Dir)
	if err != nil || !st.exists {
		return "", err
	}
	return fmt.Sprintf("%d/%d/%d", st.ino, st.size, st.mtime), nil
}

// Load reads the file.
func (f FileStore) Load(ctx context.Context) (*Users, string, error) {
	stamp, err := f.Stamp(ctx)
	if err != nil {
		return nil, "", err
	}
	u, err := Load(f.Dir)
	return u, stamp, err
}

// Update changes the file under its writers' lock (LockUsers).
func (f FileStore) Update(ctx context.Context, change func(*Users) (bool, error)) error {
	lock, err := LockUsers(ctx, f.Dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	users, err := Load(f.Dir)
	if err != nil {
		return err
	}
	changed, err := change(users)
	if err != nil || !changed {
		return err
	}
	return users.Save(f.Dir)
}

func (f FileStore) String() string { return Path(f.Dir) }
