package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// Badger recovers from a crash by dropping what it cannot read: a table
// its MANIFEST does not list is deleted, a table whose index fails its
// checksum is skipped, a damaged table can panic one of its goroutines,
// a MANIFEST that is missing is created anew, and the value log is cut
// at its first unreadable entry. On a damaged directory (a file
// truncated by a copy, a lost MANIFEST) that would serve part of the
// data, or none, as if it were all. Cassandra stops on a corrupt sstable
// (disk_failure_policy: stop); thriftd refuses to open such a directory:
// checkDataDir runs before Badger opens it. The value log (values of 1 MB
// or more) is read with its checksums verified: a value lost to a
// damaged log fails its reads, logged, instead of reading as other data.
//
// A crash leaves tables the MANIFEST does not list after every flush or
// compaction it interrupted: Badger writes a new table whole, then
// appends to the MANIFEST, synced, the change that adds it (and removes a
// compaction's inputs), and only then deletes the memtable's log or the
// inputs. An unlisted table is thus the output of a change that did not
// commit, or an input of one that did, and holds nothing that the tables
// the MANIFEST lists and the memtables' logs do not. Cassandra, too,
// removes the leftovers of an unfinished compaction when it starts. A
// MANIFEST cut short by damage leaves unlisted tables too, which may hold
// the only copy of their rows. So when the MANIFEST reads whole to its
// last byte and every table it lists is there and readable, checkDataDir
// moves the unlisted tables out of Badger's way, into a directory of
// their own under setAsideDir, and logs where: nothing is deleted, and
// the store opens after a crash without a hand on it. A MANIFEST that
// ends in a torn change, or lists a table that is missing, is damage:
// refused. One cut exactly between two changes cannot be told from a
// crash; its unlisted tables are set aside too, and the warning says
// where.
//
// A crash between creating a memtable's or the value log's next file and
// sizing it leaves the file empty, and Badger then refuses to open the
// store (github.com/dgraph-io/badger/issues/2207, open). An empty log
// holds nothing: it is set aside with the tables.

// ErrDamaged is the error of opening a damaged data directory.
var ErrDamaged = errors.New("damaged data directory")

const manifestFile = "MANIFEST"

// setAsideDir is the directory, under the data directory, of the files
// set aside at open (a subdirectory per open that set some aside).
const setAsideDir = "set-aside"

// checkDataDir checks, before Badger opens it, that the store in dir is
// whole: a MANIFEST if any table or log is there, read whole, and every
// table it lists readable (footer, index and its checksum). The tables it
// does not list, and empty logs, are set aside. A directory that does not
// exist, or holds no store yet, passes.
func checkDataDir(dir string, log *slog.Logger) error {
	// A store another process has open changes under the check (a
	// compaction's new tables are not in the MANIFEST yet): the check is
	// for Badger's own refusal to open a directory in use. The lock is
	// exclusive, so that of two processes starting on one directory only
	// one checks it and sets files aside; the other leaves the directory
	// to Badger, which opens it for one of them.
	unlock, inUse, err := lockDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	if inUse {
		return nil
	}
	defer unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read data directory %s: %w", dir, err)
	}
	unlisted, err := checkTables(dir, entries)
	if err != nil {
		return err
	}
	empty, err := emptyLogs(dir, entries)
	if err != nil {
		return err
	}
	if len(unlisted)+len(empty) == 0 {
		return nil
	}
	aside, err := setAside(dir, append(slices.Clone(unlisted), empty...))
	if err != nil {
		return err
	}
	log.Warn("set aside what a crash left: tables the MANIFEST does not list (outputs of flushes or compactions it interrupted, or inputs they replaced, whose data the store still holds) and empty logs; remove them once the store reads as expected (if the directory was damaged or copied while in use instead, the tables may hold rows it lacks: restore it from a backup)",
		"dir", aside, "tables", strings.Join(unlisted, ","), "empty_logs", strings.Join(empty, ","))
	return nil
}

// emptyLogs lists the memtable and value logs of dir that are empty. A
// crash between creating a log and sizing it leaves one, which holds
// nothing and which Badger refuses to open
// (github.com/dgraph-io/badger/issues/2207).
func emptyLogs(dir string, entries []fs.DirEntry) ([]string, error) {
	var empty []string
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".mem") && !strings.HasSuffix(name, ".vlog") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrDamaged, dir, err)
		}
		if info.Size() == 0 {
			empty = append(empty, name)
		}
	}
	return empty, nil
}

// checkTables checks the MANIFEST of dir and the tables it lists, and
// returns the tables it does not list.
func checkTables(dir string, entries []fs.DirEntry) (unlisted []string, err error) {
	onDisk := map[uint64]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sst") {
			continue
		}
		id, ok := table.ParseFileID(name)
		if !ok {
			return nil, fmt.Errorf("%w %s: a table file with an unexpected name: %s", ErrDamaged, dir, name)
		}
		onDisk[id] = name
	}
	f, err := os.Open(filepath.Join(dir, manifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		if len(onDisk) > 0 {
			return nil, fmt.Errorf("%w %s: its %s is missing but it holds %d tables (Badger would start an empty store over them); restore the directory from a backup",
				ErrDamaged, dir, manifestFile, len(onDisk))
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrDamaged, dir, err)
	}
	defer f.Close()
	m, whole, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil {
		return nil, fmt.Errorf("%w %s: its %s is unreadable: %v; restore the directory from a backup", ErrDamaged, dir, manifestFile, err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrDamaged, dir, err)
	}
	for id, name := range onDisk {
		if _, ok := m.Tables[id]; !ok {
			unlisted = append(unlisted, name)
		}
	}
	slices.Sort(unlisted)
	if len(unlisted) > 0 && whole < st.Size() {
		return nil, fmt.Errorf("%w %s: its %s ends in a torn change (%d of its %d bytes read) and does not list the tables %s (Badger would delete them); restore the directory from a backup",
			ErrDamaged, dir, manifestFile, whole, st.Size(), strings.Join(unlisted, ", "))
	}
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		name, ok := onDisk[id]
		if !ok {
			return nil, fmt.Errorf("%w %s: the table %s its %s lists is missing; restore the directory from a backup",
				ErrDamaged, dir, table.IDToFilename(id), manifestFile)
		}
		if err := checkTableFile(filepath.Join(dir, name), m.Tables[id]); err != nil {
			return nil, fmt.Errorf("%w %s: table %s: %v; restore the directory from a backup", ErrDamaged, dir, name, err)
		}
	}
	return unlisted, nil
}

// setAside moves the files named into a new directory under dir's
// setAsideDir, named after the time, and returns it.
func setAside(dir string, names []string) (string, error) {
	aside := filepath.Join(dir, setAsideDir, time.Now().UTC().Format("20060102T150405.000Z"))
	if err := os.MkdirAll(aside, 0o700); err != nil {
		return "", fmt.Errorf("set aside what a crash left in %s: %w", dir, err)
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(aside, name)); err != nil {
			return "", fmt.Errorf("set aside %s, which a crash left in %s: %w", name, dir, err)
		}
	}
	return aside, nil
}

// lockDir takes the flock that Badger takes while it has the store in
// dir open, and reports whether another process holds it (Badger, or
// another thriftd checking the directory).
func lockDir(dir string) (unlock func(), inUse bool, err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		d.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return func() { d.Close() }, false, nil
}

// checkTableFile opens a table as Badger opens it, its index checksum
// verified, turning a panic on a truncated file into an error.
func checkTableFile(path string, tm badger.TableManifest) (err error) {
	if tm.KeyID != 0 {
		return nil // encrypted: thriftd does not encrypt; Badger checks it
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			first, _, _ := strings.Cut(strings.TrimSpace(fmt.Sprint(r)), "\n")
			err = fmt.Errorf("unreadable (%s)", first)
		}
		_ = mf.Close(-1)
	}()
	_, err = table.OpenTable(mf, table.Options{
		ReadOnly:    true,
		BlockSize:   badger.DefaultOptions("").BlockSize,
		Compression: tm.Compression,
		ChkMode:     options.NoVerification, // the index's checksum is always verified
	})
	return err
}
