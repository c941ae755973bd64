package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

const backupUsage = `usage: thriftd backup --data-dir DIR --to FILE [--cluster-name NAME]

Writes a backup of a data directory to FILE (which must not exist): the
data as of the moment the backup starts, the schema and the users file,
with a checksum. With no thriftd running on DIR the store is read
directly (read-only); with one running, the backup is taken by the server
through its admin socket (DIR/` + daemon.AdminSocket + `) while it serves.

Flags:
`

const restoreUsage = `usage: thriftd restore --from FILE --data-dir NEWDIR

Restores a backup written by thriftd backup into NEWDIR, which must be
absent or empty. The whole file is checked first; a damaged or truncated
file is refused and nothing is written. The store is restored beside
NEWDIR and renamed into place once complete.

Flags:
`

// runBackupCommand runs `thriftd backup ...` or `thriftd restore ...`
// (args after the command).
func runBackupCommand(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("thriftd "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	usage := backupUsage
	if cmd == "restore" {
		usage = restoreUsage
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	var dataDir, to, from, clusterName *string
	if cmd == "backup" {
		dataDir = fs.String("data-dir", daemon.DefaultDataDir, "the data directory to back up")
		to = fs.String("to", "", "the backup file to write (must not exist)")
		clusterName = fs.String("cluster-name", daemon.DefaultClusterName, "the cluster name recorded in an offline backup (an online backup records the server's)")
	} else {
		dataDir = fs.String("data-dir", "", "the data directory to create (absent or empty)")
		from = fs.String("from", "", "the backup file to restore")
	}
	logLevel := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, reported: true}
	}
	wrong := func(format string, a ...any) error {
		fs.Usage()
		return usageError{err: fmt.Errorf(cmd+": "+format, a...)}
	}
	if fs.NArg() > 0 {
		return wrong("unexpected argument %q: %s takes flags only", fs.Arg(0), cmd)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return wrong("--log-level: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if cmd == "backup" {
		if *to == "" {
			return wrong("--to FILE is required")
		}
		if *dataDir == "" {
			return wrong("--data-dir is empty")
		}
		return backup(ctx, *dataDir, *to, *clusterName, stdout, logger)
	}
	if *from == "" {
		return wrong("--from FILE is required")
	}
	if *dataDir == "" {
		return wrong("--data-dir NEWDIR is required")
	}
	return restore(ctx, *from, *dataDir, stdout, logger)
}

// backup writes the backup of dir to the file to: into a temporary file
// beside it, checked whole, then renamed.
func backup(ctx context.Context, dir, to, clusterName string, stdout io.Writer, logger *slog.Logger) error {
	start := time.Now()
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("backup: data directory: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("backup: data directory %s is not a directory", dir)
	}
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("backup: %s exists; choose a new file name", to)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".partial-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing left to remove
	defer tmp.Close()

	mode := "offline"
	lock, err := auth.LockDir(dir)
	switch {
	case errors.Is(err, auth.ErrLocked):
		mode = "online"
		err = backupOnline(ctx, dir, tmp)
	case err != nil:
		return fmt.Errorf("backup: %w", err)
	default:
		err = backupOffline(ctx, dir, clusterName, tmp, logger)
		if uerr := lock.Unlock(); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		return fmt.Errorf("backup of %s (%s): %w", dir, mode, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// What reached the disk is read back whole before the file gets its
	// name: a backup cut short (a server stopped meanwhile) is refused.
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	hdr, size, err := badgerstore.VerifyBackup(ctx, tmp)
	if err != nil {
		return fmt.Errorf("backup of %s (%s): the file written does not verify: %w", dir, mode, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), to); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := syncDir(filepath.Dir(to)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "backup of %s (%s) written to %s: %d bytes, %d keyspaces, partitioner %s, cluster %q, schema %s, in %s\n",
		dir, mode, to, size, len(hdr.Keyspaces), hdr.Partitioner, hdr.ClusterName, hdr.SchemaVersion, time.Since(start).Round(time.Millisecond))
	return nil
}

// backupOffline writes the backup of a data directory no thriftd runs
// on; the caller holds its lock.
func backupOffline(ctx context.Context, dir, clusterName string, out io.Writer, logger *slog.Logger) error {
	files := map[string][]byte{}
	users, err := os.ReadFile(auth.Path(dir))
	switch {
	case err == nil:
		files[auth.UsersFile] = users
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read the users file: %w", err)
	}
	e, err := badgerstore.OpenReadOnly(ctx, dir, logger)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	_, _, err = e.WriteBackup(ctx, w, badgerstore.BackupInfo{ClusterName: clusterName, Files: files})
	if err == nil {
		err = w.Flush()
	}
	if cerr := e.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// backupOnline asks the thriftd running on dir for a backup, through its
// admin socket.
func backupOnline(ctx context.Context, dir string, out io.Writer) error {
	socket := daemon.AdminSocketPath(dir)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://thriftd"+daemon.AdminBackupPath, nil)
	if err != nil {
		return err
	}
	client := daemon.AdminClient(dir)
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("a thriftd holds the data directory, but its admin socket %s does not answer: %w", socket, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("the running thriftd refused the backup: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return fmt.Errorf("receive the backup from the running thriftd: %w", err)
	}
	return nil
}

// restore restores the backup file from into newDir.
func restore(ctx context.Context, from, newDir string, stdout io.Writer, logger *slog.Logger) error {
	start := time.Now()
	if err := checkRestoreTarget(newDir); err != nil {
		return err
	}
	f, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	hdr, size, err := badgerstore.VerifyBackup(ctx, f)
	if err != nil {
		return fmt.Errorf("restore: %s: %w; nothing was restored", from, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	parent := filepath.Dir(filepath.Clean(newDir))
	staging, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(newDir))+".restoring-*")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.RemoveAll(staging)
	restored := filepath.Join(staging, "data")
	if _, err := badgerstore.RestoreBackup(ctx, bufio.NewReaderSize(f, 1<<20), restored, logger); err != nil {
		return fmt.Errorf("restore: %s: %w; nothing was restored", from, err)
	}
	if err := checkRestoreTarget(newDir); err != nil {
		return err
	}
	// rename(2) replaces an empty directory atomically (os.Rename refuses
	// any directory).
	if err := syscall.Rename(restored, newDir); err != nil {
		return fmt.Errorf("restore: move the restored store into place: %w; nothing was restored", err)
	}
	if err := syncDir(parent); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "restored %s (%d bytes, written %s) into %s: %d keyspaces, partitioner %s, cluster %q, in %s\n",
		from, size, hdr.Created.Format(time.RFC3339), newDir, len(hdr.Keyspaces), hdr.Partitioner, hdr.ClusterName, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "start it with: thriftd --data-dir %s --partitioner %s --cluster-name %q\n", newDir, hdr.Partitioner, hdr.ClusterName)
	return nil
}

// checkRestoreTarget refuses a restore into a directory that holds
// anything, or into something that is not a directory.
func checkRestoreTarget(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("restore: %s exists and is not a directory; restore into a new or empty directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("restore: %s is not empty (it holds %s); restore into a new or empty directory", dir, entries[0].Name())
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
