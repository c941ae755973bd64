package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

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

// ErrDamaged is the error of opening a damaged data directory.
var ErrDamaged = errors.New("damaged data directory")

const manifestFile = "MANIFEST"

// checkDataDir checks, before Badger opens it, that the store in dir is
// whole: a MANIFEST if any table or log is there, every table it lists
// readable (footer, index and its checksum), and no table it does not
// list. A directory that does not exist, or holds no store yet, passes.
func checkDataDir(dir string) error {
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
	m, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil {
		return fmt.Errorf("%w %s: its %s is unreadable: %v; restore the directory from a backup", ErrDamaged, dir, manifestFile, err)
	}
	var unlisted []string
	for id, name := range onDisk {
		if _, ok := m.Tables[id]; !ok {
			unlisted = append(unlisted, name)
		}
	}
	if len(unlisted) > 0 {
		slices.Sort(unlisted)
		return fmt.Errorf("%w %s: its %s does not list the tables %s (a truncated %s; Badger would delete them); restore the directory from a backup, or, if thriftd was killed during a compaction, move these tables out of the directory",
			ErrDamaged, dir, manifestFile, strings.Join(unlisted, ", "), manifestFile)
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
	return nil
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
