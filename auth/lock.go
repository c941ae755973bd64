package auth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockFile is the name of the lock a running thriftd, or a user command,
// holds in the data directory.
const LockFile = "thriftd.lock"

// ErrLocked is the error of Lock on a data directory whose lock is held.
var ErrLocked = errors.New("data directory in use")

// Lock is a held lock of a data directory.
type Lock struct{ f *os.File }

// LockDir takes the lock of the data directory dir, creating the directory
// if needed, without waiting: if another process holds it, the error is
// ErrLocked. The lock is released by Unlock or when the process ends.
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked by a running thriftd or thriftd user command", ErrLocked, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	return l.f.Close()
}

// UsersLockFile is the name of the lock the writers of the users file
// hold in the data directory, so that two never lose each other's change.
// A running thriftd only reads the file, and does not take it.
const UsersLockFile = "thriftd-users.lock"

// LockUsers takes the lock of the users file of the data directory dir,
// waiting for another writer to finish, up to ctx's end.
func LockUsers(ctx context.Context, dir string) (*Lock, error) {
	path := filepath.Join(dir, UsersLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the users file: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: held by another thriftd user command: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
