package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

// AdminSocket is the name of the unix socket a running thriftd serves its
// administration on, in its data directory: `thriftd backup` finds a
// running server there. Only the user thriftd runs as (and root) may
// connect.
const AdminSocket = "thriftd-admin.sock"

// AdminBackupPath is the HTTP path on the admin socket that answers a
// backup file of the running server's data directory.
const AdminBackupPath = "/v1/backup"

// maxUnixSocketPath is the longest path a unix socket can be bound to
// (sun_path is 108 bytes with its terminating NUL).
const maxUnixSocketPath = 107

// AdminSocketPath is the admin socket of the data directory dir.
func AdminSocketPath(dir string) string { return filepath.Join(dir, AdminSocket) }

// adminServer is the HTTP server on the admin socket.
type adminServer struct {
	path string
	srv  *http.Server
	// backups counts the backups running, so that the store is closed
	// only once they have stopped.
	backups sync.WaitGroup
}

// startAdmin serves the admin socket of cfg.DataDir, whose lock the
// caller holds (a socket left by a thriftd that died is replaced). When
// the path is too long for a unix socket, thriftd runs without one and
// says so: online backups are then impossible.
func startAdmin(cfg Config, engine *badgerstore.Engine, logger *slog.Logger) (*adminServer, error) {
	path := AdminSocketPath(cfg.DataDir)
	if len(path) > maxUnixSocketPath {
		logger.Warn("the admin socket's path is too long for a unix socket; online backups are disabled (use a shorter --data-dir)",
			"path", path, "max_bytes", maxUnixSocketPath)
		return nil, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("admin socket: remove the stale %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	a := &adminServer{path: path}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+AdminBackupPath, func(w http.ResponseWriter, r *http.Request) {
		a.backups.Add(1)
		defer a.backups.Done()
		a.serveBackup(w, r, cfg, engine, logger)
	})
	a.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := a.srv.Serve(peerCheckedListener{ln, logger}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin socket: serving failed", "err", err)
		}
	}()
	logger.Info("admin socket listening", "path", path)
	return a, nil
}

// serveBackup answers a backup file of the running store: the data as
// of the moment it starts, the schema and the users file.
func (a *adminServer) serveBackup(w http.ResponseWriter, r *http.Request, cfg Config, engine *badgerstore.Engine, logger *slog.Logger) {
	files := map[string][]byte{}
	users, err := os.ReadFile(auth.Path(cfg.DataDir))
	switch {
	case err == nil:
		files[auth.UsersFile] = users
	case !errors.Is(err, fs.ErrNotExist):
		logger.Error("backup refused: cannot read the users file", "err", err)
		http.Error(w, fmt.Sprintf("read the users file: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	start := time.Now()
	logger.Info("backup started", "data_dir", cfg.DataDir)
	hdr, n, err := engine.WriteBackup(r.Context(), w, badgerstore.BackupInfo{ClusterName: cfg.ClusterName, Files: files})
	if err != nil {
		// The client sees a file without its checksum, and refuses it.
		logger.Error("backup failed", "err", err, "bytes", n)
		return
	}
	logger.Info("backup done", "bytes", n, "keyspaces", len(hdr.Keyspaces), "duration", time.Since(start))
}

// close stops the admin socket, cutting a backup in progress (its client
// gets a truncated file, which it refuses), and waits until no backup
// reads the store.
func (a *adminServer) close() error {
	if a == nil {
		return nil
	}
	err := a.srv.Close()
	a.backups.Wait()
	if rerr := os.Remove(a.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// peerCheckedListener accepts the connections of thriftd's own user or
// root only (SO_PEERCRED), whatever the socket file's mode.
type peerCheckedListener struct {
	net.Listener
	logger *slog.Logger
}

func (l peerCheckedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && (uid == 0 || uid == uint32(os.Getuid())) {
			return c, nil
		}
		l.logger.Warn("admin socket: connection of another user refused", "uid", uid, "err", err)
		c.Close()
	}
}

// peerUID is the user id of the process at the other end of a unix
// socket connection.
func peerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, credErr
	}
	return cred.Uid, nil
}

// AdminClient is an HTTP client of the admin socket of a data directory.
func AdminClient(dir string) *http.Client {
	path := AdminSocketPath(dir)
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}}
}
