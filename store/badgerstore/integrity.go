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
// inputs. Such a table holds nothing that the tables the MANIFEST lists
// and the memtables' logs do not, and Cassandra, too, removes the
// leftovers of an unfinished compaction when it starts. A MANIFEST cut
// short by damage leaves unlisted tables too, which may hold the only
// copy of their rows. So when the MANIFEST reads whole to its last byte
// and every table it lists is there and readable, checkDataDir moves the
// unlisted tables out of Badger's way, into a directory of their own
// under unlistedDir, and logs where: nothing is deleted, and the store
// opens after a crash without a hand on it. A MANIFEST that ends in a
// torn change, or lists a table that is missing, is damage: refused. One
// cut exactly between two changes cannot be told from a crash; its
// unlisted tables are set aside too, and the warning says where.

// ErrDamaged is the error of opening a damaged data directory.
var ErrDamaged = errors.New("damaged data directory")

const manifestFile = "MANIFEST"

// unlistedDir is the directory, under the data directory, of the tables
// set aside at open (a subdirectory per open that set some aside).
const unlistedDir = "unlisted-tables"

// checkDataDir checks, before Badger opens it, that the store in dir is
// whole: a MANIFEST if any table or log is there, read whole, and every
// table it lists readable (footer, index and its checksum). Tables it
// does not list are set aside (setAsideUnlisted). A directory that does
// not exist, or holds no store yet, passes.
func checkDataDir(dir string, log *slog.Logger) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read data directory %s: %w", dir, err)
	}
	// A store another process has open changes under the check (a
	// compaction's new tables are not in the MANIFEST yet): the check is
	// for Badger's own refusal to open a directory in use.
	unlock, inUse := lockDirShared(dir)
	if inUse {
		return nil
	}
	defer unlock()
	onDisk := map[uint64]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sst") {
			continue
		}
		id, ok := table.ParseFileID(name)
		if !ok {
			return fmt.Errorf("%w %s: a table file with an unexpected name: %s", ErrDamaged, dir, name)
		}
		onDisk[id] = name
	}
	f, err := os.Open(filepath.Join(dir, manifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		if len(onDisk) > 0 {
			return fmt.Errorf("%w %s: its %s is missing but it holds %d tables (Badger would start an empty store over them); restore the directory from a backup",
				ErrDamaged, dir, manifestFile, len(onDisk))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrDamaged, dir, err)
	}
	defer f.Close()
	m, whole, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil {
		return fmt.Errorf("%w %s: its %s is unreadable: %v; restore the directory from a backup", ErrDamaged, dir, manifestFile, err)
	}
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w %s: %v", ErrDamaged, dir, err)
	}
	var unlisted []string
	for id, name := range onDisk {
		if _, ok := m.Tables[id]; !ok {
			unlisted = append(unlisted, name)
		}
	}
	slices.Sort(unlisted)
	if len(unlisted) > 0 && whole < st.Size() {
		return fmt.Errorf("%w %s: its %s ends in a torn change (%d of its %d bytes read) and does not list the tables %s (Badger would delete them); restore the directory from a backup",
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
			return fmt.Errorf("%w %s: the table %s its %s lists is missing; restore the directory from a backup",
				ErrDamaged, dir, table.IDToFilename(id), manifestFile)
		}
		if err := checkTableFile(filepath.Join(dir, name), m.Tables[id]); err != nil {
			return fmt.Errorf("%w %s: table %s: %v; restore the directory from a backup", ErrDamaged, dir, name, err)
		}
	}
	if len(unlisted) == 0 {
		return nil
	}
	aside, err := setAsideUnlisted(dir, unlisted)
	if err != nil {
		return err
	}
	log.Warn("set aside tables the MANIFEST does not list: the outputs of flushes or compactions a crash interrupted, whose data the store still holds; remove them once it reads as expected (if the directory was damaged or copied while in use instead, they may hold rows it lacks: restore it from a backup)",
		"dir", aside, "tables", len(unlisted), "names", strings.Join(unlisted, ","))
	return nil
}

// setAsideUnlisted moves the tables named into a new directory under
// dir's unlistedDir, named after the time, and returns it.
func setAsideUnlisted(dir string, names []string) (string, error) {
	aside := filepath.Join(dir, unlistedDir, time.Now().UTC().Format("20060102T150405.000Z"))
	if err := os.MkdirAll(aside, 0o700); err != nil {
		return "", fmt.Errorf("set aside the tables its %s does not list: %w", manifestFile, err)
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(aside, name)); err != nil {
			return "", fmt.Errorf("set aside table %s its %s does not list: %w", name, manifestFile, err)
		}
	}
	return aside, nil
}

// lockDirShared takes a shared lock of dir, the flock Badger takes
// exclusively while it has the store open, and reports whether another
// process holds it.
func lockDirShared(dir string) (unlock func(), inUse bool) {
	d, err := os.Open(dir)
	if err != nil {
		return func() {}, false
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		d.Close()
		return func() {}, errors.Is(err, syscall.EWOULDBLOCK)
	}
	return func() { d.Close() }, false
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
