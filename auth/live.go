package auth

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// CheckInterval is how long a running thriftd goes on with the users it
// read before it looks at the file again, on a call that checks
// permissions; every login looks at once. Cassandra 3.11 caches roles and
// permissions for 2 seconds (roles_validity_in_ms,
// permissions_validity_in_ms).
const CheckInterval = time.Second

// Live is the users of a data directory as a running thriftd sees them:
// read again when the file changes (another inode, size or modification
// time), which it looks at on every login and, on the calls that check
// permissions, at most once per CheckInterval, so that a call costs a
// clock reading and no system call. A file that cannot be read or parsed
// is logged and the users read last stay in force.
type Live struct {
	store    Store
	interval time.Duration
	// statOnLogin: every login looks at the store, as it costs a stat of
	// the users file; a store in the cluster is looked at by logins too
	// at most once per interval, not a query per login.
	statOnLogin bool
	log         *slog.Logger

	current   atomic.Pointer[liveUsers]
	nextCheck atomic.Int64 // Unix nanoseconds
	reload    sync.Mutex   // one look at the file at a time
}

// liveUsers is one reading of the store.
type liveUsers struct {
	users *Users
	stamp string
}

// fileStamp tells one version of the users file from another: it is
// replaced by a rename, so a new version is a new inode.
type fileStamp struct {
	exists bool
	ino    uint64
	size   int64
	mtime  int64
}

func statUsers(dir string) (fileStamp, error) {
	st, err := os.Stat(Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	stamp := fileStamp{exists: true, size: st.Size(), mtime: st.ModTime().UnixNano()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		stamp.ino = uint64(sys.Ino)
	}
	return stamp, nil
}

// OpenLive reads the users of the data directory dir, to be read again
// when the file changes.
func OpenLive(dir string, logger *slog.Logger) (*Live, error) {
	return OpenLiveStore(context.Background(), FileStore{Dir: dir}, logger)
}

// OpenLiveStore reads the users of store, to be read again when they
// change. On the cluster, a look is one read of the version, and the
// document is read only when it changed.
func OpenLiveStore(ctx context.Context, store Store, logger *slog.Logger) (*Live, error) {
	users, stamp, err := store.Load(ctx)
	if err != nil {
		return nil, err
	}
	_, isFile := store.(FileStore)
	l := &Live{store: store, interval: CheckInterval, log: logger, statOnLogin: isFile}
	l.current.Store(&liveUsers{users: users, stamp: stamp})
	l.nextCheck.Store(time.Now().Add(l.interval).UnixNano())
	return l, nil
}

// Users returns the users as last read; they must not be changed.
func (l *Live) Users() *Users { return l.current.Load().users }

// Refresh reads the file again if it changed since it was read. It never
// fails: a file that cannot be read is logged, and the users read last
// stay in force until it can.
func (l *Live) Refresh(ctx context.Context) {
	l.reload.Lock()
	defer l.reload.Unlock()
	l.refreshLocked(ctx)
}

// refreshLocked is Refresh, with l.reload held.
func (l *Live) refreshLocked(ctx context.Context) {
	l.nextCheck.Store(time.Now().Add(l.interval).UnixNano())
	cur := l.current.Load()
	stamp, err := l.store.Stamp(ctx)
	if err != nil {
		l.log.ErrorContext(ctx, "users: cannot look at it; the users read last stay in force", "store", l.store.String(), "err", err)
		return
	}
	if stamp == cur.stamp {
		return
	}
	users, stamp, err := l.store.Load(ctx)
	if err != nil {
		l.log.ErrorContext(ctx, "users: cannot read it; the users read last stay in force", "store", l.store.String(), "err", err)
		// Not again until they change.
		l.current.Store(&liveUsers{users: cur.users, stamp: stamp})
		return
	}
	l.current.Store(&liveUsers{users: users, stamp: stamp})
	l.log.InfoContext(ctx, "users read again", "store", l.store.String(), "users", len(users.Users))
}

// maybeRefresh refreshes the users if CheckInterval has passed; while one
// call refreshes, the others go on with the users read last.
func (l *Live) maybeRefresh(ctx context.Context) {
	if time.Now().UnixNano() < l.nextCheck.Load() {
		return
	}
	if !l.reload.TryLock() {
		return
	}
	defer l.reload.Unlock()
	l.refreshLocked(ctx)
}

// Authenticate reports whether password is user's, as the file says now,
// or as the cluster said at most CheckInterval ago (legacy.Authenticator).
func (l *Live) Authenticate(user, password string) bool {
	if l.statOnLogin {
		l.Refresh(context.Background())
	} else {
		l.maybeRefresh(context.Background())
	}
	return l.Users().Authenticate(user, password)
}

// Permitted reports whether user may do action on family of keyspace
// (Users.Permitted), as the file said at most CheckInterval ago
// (legacy.Authorizer).
func (l *Live) Permitted(ctx context.Context, user, action, keyspace, family string) bool {
	l.maybeRefresh(ctx)
	return l.Users().Permitted(user, action, keyspace, family)
}

// RevokeAllOn takes from every user the permissions on family of keyspace
// (family "" for the keyspace and its families), once it was dropped, in
// the users store, as `thriftd user revoke` would (legacy.Revoker).
func (l *Live) RevokeAllOn(ctx context.Context, keyspace, family string) error {
	err := l.store.Update(ctx, func(users *Users) (bool, error) {
		return users.RevokeAllOn(Resource{Keyspace: keyspace, Family: family}), nil
	})
	if err != nil {
		return err
	}
	l.Refresh(ctx)
	return nil
}
