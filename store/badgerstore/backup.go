package badgerstore

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// A backup file is one stream, written as the store is read:
//
//	magic            "thriftd-backup\n"
//	header length    uint32, big-endian
//	header           JSON (BackupHeader)
//	chunks           uint32 big-endian length, then that many bytes of
//	                 Badger's backup stream (DB.Backup since 0), gzip
//	                 compressed (fastest level)...
//	end of chunks    a chunk of length 0
//	checksum         SHA-256 of every byte before it
//
// The data is chunked because its length is not known until the whole
// store is read; the checksum comes last for the same reason, so a reader
// knows a file is whole and intact only once it has read it to the end.

// BackupFormatVersion is the version of the backup file format this
// package writes and reads.
const BackupFormatVersion = 1

const (
	backupMagic       = "thriftd-backup\n"
	backupCompression = "gzip"
	// maxBackupHeader bounds the header a reader accepts: schemas and the
	// data directory's own files are small.
	maxBackupHeader = 64 << 20
	// backupChunkSize is the size of the chunks written; maxBackupChunk
	// is the largest a reader accepts.
	backupChunkSize = 1 << 20
	maxBackupChunk  = 4 << 20
	// loadPendingWrites is how many batches Badger's Load keeps in flight.
	loadPendingWrites = 16
	// backupCacheSize is the block cache of a store opened for a backup
	// or a restore: it reads each block once.
	backupCacheSize = 16 << 20
	// restoreUpkeepInterval is how often a restore releases Badger's
	// idle table allocators and reclaims the pages of the tables it
	// wrote: a restore only writes, so no page reclaimed is read again.
	restoreUpkeepInterval = 250 * time.Millisecond
)

// ErrBackupDamaged is the error of reading a backup file that is
// truncated, corrupted or not a backup file at all.
var ErrBackupDamaged = errors.New("backup file damaged")

// BackupHeader is what a backup file says about itself.
type BackupHeader struct {
	FormatVersion int       `json:"format_version"`
	Created       time.Time `json:"created"`
	// Compression is how the data is compressed: "gzip".
	Compression string `json:"compression"`
	// Partitioner laid the rows out; the restored store keeps it.
	Partitioner string `json:"partitioner"`
	// ClusterName is the cluster name the server had (informative).
	ClusterName string `json:"cluster_name"`
	// SchemaVersion is the catalog's version, and Keyspaces its content,
	// as the data of the backup holds them.
	SchemaVersion string           `json:"schema_version"`
	Keyspaces     []BackupKeyspace `json:"keyspaces"`
	// Files are files of the data directory kept outside the store (the
	// users of the password authenticator), by name.
	Files map[string][]byte `json:"files,omitempty"`
}

// BackupKeyspace is a keyspace's definition and its families'.
type BackupKeyspace struct {
	Def    store.KeyspaceDef `json:"def"`
	Tables []store.TableDef  `json:"tables"`
}

// BackupInfo is what a backup records beyond the store.
type BackupInfo struct {
	ClusterName string
	// Files are files of the data directory to restore with the store,
	// by base name.
	Files map[string][]byte
}

// WriteBackup writes a full backup of the store to w: a header (the
// partitioner, info, the catalog), every key of the store as one
// consistent snapshot (Badger's backup stream), and a checksum. Writes
// go on while it runs and are in the backup or not as a whole; schema
// changes wait until it is done, so that the header's catalog is the
// data's. It returns the header it wrote and the bytes written.
func (e *Engine) WriteBackup(ctx context.Context, w io.Writer, info BackupInfo) (*BackupHeader, int64, error) {
	e.schemaMu.Lock()
	defer e.schemaMu.Unlock()
	if err := e.settleAll(ctx); err != nil {
		return nil, 0, err
	}
	hdr := &BackupHeader{
		FormatVersion: BackupFormatVersion,
		Created:       e.now().UTC(),
		Compression:   backupCompression,
		Partitioner:   e.part.Name(),
		ClusterName:   info.ClusterName,
		Files:         info.Files,
	}
	cat := e.Catalog()
	hdr.SchemaVersion = cat.Version
	for _, name := range cat.KeyspaceNames() {
		ks := cat.Keyspaces[name]
		bk := BackupKeyspace{Def: ks.Def, Tables: []store.TableDef{}}
		for _, tn := range ks.TableNames() {
			bk.Tables = append(bk.Tables, ks.Tables[tn].Def)
		}
		hdr.Keyspaces = append(hdr.Keyspaces, bk)
	}
	headerJSON, err := json.Marshal(hdr)
	if err != nil {
		return nil, 0, fmt.Errorf("backup: encode header: %w", err)
	}

	out := &hashingWriter{w: w, h: sha256.New(), ctx: ctx}
	var lenBuf [4]byte
	binary.BigEndian.PutUint32(lenBuf[:], uint32(len(headerJSON)))
	for _, b := range [][]byte{[]byte(backupMagic), lenBuf[:], headerJSON} {
		if _, err := out.Write(b); err != nil {
			return nil, out.n, fmt.Errorf("backup: write header: %w", err)
		}
	}
	chunks := &chunkWriter{w: out, buf: make([]byte, 0, backupChunkSize)}
	zw, err := gzip.NewWriterLevel(chunks, gzip.BestSpeed)
	if err != nil {
		return nil, out.n, fmt.Errorf("backup: %w", err)
	}
	// Badger's DB.Backup streams with several producers, each reading in a
	// read transaction of its own, opened when it starts: a write that
	// commits in between is in one part of the key space and not in
	// another. One producer reads everything in one transaction, which is
	// one moment of the store.
	stream := e.db.NewStream()
	stream.LogPrefix = "thriftd backup"
	stream.NumGo = 1
	if _, err := stream.Backup(zw, 0); err != nil {
		return nil, out.n, fmt.Errorf("backup: stream the store: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, out.n, fmt.Errorf("backup: write data: %w", err)
	}
	if err := chunks.finish(); err != nil {
		return nil, out.n, fmt.Errorf("backup: write data: %w", err)
	}
	sum := out.h.Sum(nil)
	if _, err := out.Write(sum); err != nil {
		return nil, out.n, fmt.Errorf("backup: write checksum: %w", err)
	}
	return hdr, out.n, nil
}

// VerifyBackup reads a whole backup file and checks its format and its
// checksum, without loading it; it returns the header and the bytes read.
// A damaged or truncated file is an ErrBackupDamaged.
func VerifyBackup(ctx context.Context, r io.Reader) (*BackupHeader, int64, error) {
	in := newBackupReader(ctx, r)
	hdr, err := in.header()
	if err != nil {
		return nil, in.n, err
	}
	data, err := in.data()
	if err != nil {
		return nil, in.n, err
	}
	if _, err := io.Copy(io.Discard, data); err != nil {
		return nil, in.n, in.damaged(err)
	}
	if err := in.checkSum(); err != nil {
		return nil, in.n, err
	}
	return hdr, in.n, nil
}

// RestoreBackup loads the backup read from r into dir, which must not
// exist yet (it is created), and checks the result: the checksum, the
// partitioner, the catalog against the header. It writes the header's
// files into dir. On failure dir may hold part of the data; callers
// restore into a temporary directory and rename it when this succeeds.
func RestoreBackup(ctx context.Context, r io.Reader, dir string, logger *slog.Logger) (*BackupHeader, error) {
	if logger == nil {
		logger = slog.Default()
	}
	in := newBackupReader(ctx, r)
	hdr, err := in.header()
	if err != nil {
		return nil, err
	}
	part, err := partition.ByName(hdr.Partitioner)
	if err != nil {
		return nil, fmt.Errorf("%w: partitioner %q: %v", ErrBackupDamaged, hdr.Partitioner, err)
	}
	for name := range hdr.Files {
		if err := checkBackupFileName(name); err != nil {
			return nil, err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	data, err := in.data()
	if err != nil {
		return nil, err
	}
	// The store is restored within the default memory budget's shares,
	// as thriftd serves it (memory.go): with Badger's defaults (five
	// waiting memtables, four compactors), its pooled table allocators
	// and the pages of every table written, a restore of a 1 GB backup
	// peaked at 3.6 GB resident (docs/PERFORMANCE.md).
	sizing := SizeMemory(0)
	db, err := badger.Open(sizing.Apply(badger.DefaultOptions(dir)).
		WithLogger(badgerLogger{logger}).
		WithBlockCacheSize(backupCacheSize).
		WithNumVersionsToKeep(1).
		WithCompactL0OnClose(false))
	if err != nil {
		return nil, fmt.Errorf("restore: open badger store in %q: %w", dir, err)
	}
	stopUpkeep := startRestoreUpkeep(ctx, db, dir, sizing, logger)
	loadErr := db.Load(data, loadPendingWrites)
	if loadErr != nil {
		loadErr = in.damaged(loadErr)
	} else if _, err := io.Copy(io.Discard, data); err != nil {
		loadErr = in.damaged(err)
	} else {
		loadErr = in.checkSum()
	}
	stopUpkeep()
	if err := db.Close(); err != nil && loadErr == nil {
		loadErr = fmt.Errorf("restore: close badger store: %w", err)
	}
	if loadErr != nil {
		return nil, loadErr
	}

	// The restored store opens as thriftd opens it, with the recorded
	// partitioner, and holds the recorded catalog.
	e, err := Open(ctx, Options{Dir: dir, Partitioner: part, Logger: logger, GCInterval: -1})
	if err != nil {
		return nil, fmt.Errorf("restore: open the restored store: %w", err)
	}
	got := e.Catalog().Version
	if err := e.Close(); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if got != hdr.SchemaVersion {
		return nil, fmt.Errorf("%w: the restored schema is version %s, the header says %s", ErrBackupDamaged, got, hdr.SchemaVersion)
	}
	names := make([]string, 0, len(hdr.Files))
	for name := range hdr.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), hdr.Files[name], 0o600); err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
	}
	return hdr, nil
}

// startRestoreUpkeep releases the idle allocators of db's table builders
// (allocpool.go) and reclaims the pages of its mapped tables above the
// sizing's share (maptrim_linux.go) every restoreUpkeepInterval, until
// the returned stop, which waits for it, is called: before db closes.
func startRestoreUpkeep(ctx context.Context, db *badger.DB, dir string, sizing MemorySizing, logger *slog.Logger) (stop func()) {
	pool, err := badgerAllocatorPool(db)
	if err != nil {
		logger.WarnContext(ctx, "restore: Badger's idle table allocators will stay in memory", "err", err)
	}
	trimmer, err := newMappedTrimmer(dir, sizing.MappedFiles)
	if err != nil {
		logger.WarnContext(ctx, "restore: the tables written will stay resident", "err", err)
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(restoreUpkeepInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if pool != nil {
					drainAllocatorPool(pool)
				}
				if trimmer != nil {
					trimmer.trimIfOver(ctx, logger)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// checkBackupFileName refuses a file name that is not a plain name in the
// data directory, or that is one of Badger's.
func checkBackupFileName(name string) error {
	ext := filepath.Ext(name)
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name ||
		ext == ".sst" || ext == ".vlog" || ext == ".mem" || name == "MANIFEST" || name == "KEYREGISTRY" || name == "LOCK" {
		return fmt.Errorf("%w: it names a file %q of the data directory", ErrBackupDamaged, name)
	}
	return nil
}

// OpenReadOnly opens the store in dir read-only, with the partitioner it
// was written with, for a backup of a stopped server's data directory.
// Badger takes a shared lock of dir: a server cannot open it meanwhile,
// nor can it be opened while a server runs on it. Writes fail.
func OpenReadOnly(ctx context.Context, dir string, logger *slog.Logger) (*Engine, error) {
	if logger == nil {
		logger = slog.Default()
	}
	db, err := badger.Open(badger.DefaultOptions(dir).
		WithLogger(badgerLogger{logger}).
		WithReadOnly(true).
		WithBlockCacheSize(backupCacheSize).
		WithNumGoroutines(2).
		WithCompactL0OnClose(false))
	if err != nil {
		return nil, fmt.Errorf("open badger store in %q read-only: %w", dir, err)
	}
	var partName []byte
	err = db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(partitionerKey)
		if err != nil {
			return err
		}
		partName, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		db.Close()
		return nil, fmt.Errorf("%q holds no thriftd store (no partitioner recorded)", dir)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read the partitioner of the store in %q: %w", dir, err)
	}
	part, err := partition.ByName(string(partName))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("the store in %q: %w", dir, err)
	}
	// A server that stopped without closing its store may have left
	// acknowledged writes in the deferred writes' log, which only a start
	// applies: a backup without them would lose them unsaid.
	if n, err := unappliedWrites(db, dir); err != nil || n > 0 {
		db.Close()
		if err == nil {
			err = fmt.Errorf("the store in %q holds %d acknowledged writes not yet applied (its server stopped without closing it): start thriftd on it once, stop it, then back it up", dir, n)
		}
		return nil, err
	}
	e := &Engine{
		db:       db,
		part:     part,
		log:      logger,
		now:      time.Now,
		rowLocks: newRowLocks(),
		stop:     make(chan struct{}),
		dropKick: make(chan struct{}, 1),
	}
	if err := e.loadCatalog(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the store in %q: %w", dir, err)
	}
	return e, nil
}

// hashingWriter writes to w, hashing and counting what it writes, and
// fails once ctx is done.
type hashingWriter struct {
	w   io.Writer
	h   hash.Hash
	n   int64
	ctx context.Context
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	if err := hw.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

// chunkWriter cuts what is written into length-prefixed chunks.
type chunkWriter struct {
	w   io.Writer
	buf []byte
}

func (cw *chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), cap(cw.buf)-len(cw.buf))
		cw.buf = append(cw.buf, p[:n]...)
		p = p[n:]
		written += n
		if len(cw.buf) == cap(cw.buf) {
			if err := cw.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (cw *chunkWriter) flush() error {
	if len(cw.buf) == 0 {
		return nil
	}
	var lenBuf [4]byte
	binary.BigEndian.PutUint32(lenBuf[:], uint32(len(cw.buf)))
	if _, err := cw.w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := cw.w.Write(cw.buf); err != nil {
		return err
	}
	cw.buf = cw.buf[:0]
	return nil
}

// finish writes what is buffered and the end of the chunks.
func (cw *chunkWriter) finish() error {
	if err := cw.flush(); err != nil {
		return err
	}
	_, err := cw.w.Write([]byte{0, 0, 0, 0})
	return err
}

// backupReader reads a backup file, hashing what it reads.
type backupReader struct {
	ctx context.Context
	r   *bufio.Reader
	h   hash.Hash
	n   int64
}

func newBackupReader(ctx context.Context, r io.Reader) *backupReader {
	return &backupReader{ctx: ctx, r: bufio.NewReaderSize(r, 64<<10), h: sha256.New()}
}

// readFull reads len(p) bytes, hashed.
func (br *backupReader) readFull(p []byte) error {
	if err := br.ctx.Err(); err != nil {
		return err
	}
	n, err := io.ReadFull(br.r, p)
	br.h.Write(p[:n])
	br.n += int64(n)
	return err
}

// damaged describes a read failure: the end of the file before its end is
// a truncated file.
func (br *backupReader) damaged(err error) error {
	switch {
	case errors.Is(err, ErrBackupDamaged), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: truncated after %d bytes", ErrBackupDamaged, br.n)
	}
	return fmt.Errorf("%w: at byte %d: %v", ErrBackupDamaged, br.n, err)
}

// header reads the magic and the header.
func (br *backupReader) header() (*BackupHeader, error) {
	magic := make([]byte, len(backupMagic))
	err := br.readFull(magic)
	if !strings.HasPrefix(backupMagic, string(magic[:br.n])) {
		return nil, fmt.Errorf("%w: not a thriftd backup file (it does not begin with %q)", ErrBackupDamaged, backupMagic[:len(backupMagic)-1])
	}
	if err != nil {
		return nil, br.damaged(err)
	}
	var lenBuf [4]byte
	if err := br.readFull(lenBuf[:]); err != nil {
		return nil, br.damaged(err)
	}
	size := binary.BigEndian.Uint32(lenBuf[:])
	if size > maxBackupHeader {
		return nil, fmt.Errorf("%w: a header of %d bytes", ErrBackupDamaged, size)
	}
	raw := make([]byte, size)
	if err := br.readFull(raw); err != nil {
		return nil, br.damaged(err)
	}
	var hdr BackupHeader
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hdr); err != nil {
		return nil, fmt.Errorf("%w: unreadable header: %v", ErrBackupDamaged, err)
	}
	if hdr.FormatVersion != BackupFormatVersion {
		return nil, fmt.Errorf("%w: format version %d; this thriftd reads version %d", ErrBackupDamaged, hdr.FormatVersion, BackupFormatVersion)
	}
	if hdr.Compression != backupCompression {
		return nil, fmt.Errorf("%w: unknown compression %q", ErrBackupDamaged, hdr.Compression)
	}
	return &hdr, nil
}

// data reads the data: the chunks, as one stream ending at the end of
// the chunks, decompressed. A decompression error is ErrBackupDamaged.
func (br *backupReader) data() (io.Reader, error) {
	cr := &chunkReader{br: br}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		return nil, br.damaged(err)
	}
	zr.Multistream(false)
	return &dataReader{zr: zr, cr: cr, br: br}, nil
}

// dataReader decompresses the data; at its end it reads the end of the
// chunks, which nothing may precede. Its errors are ErrBackupDamaged.
type dataReader struct {
	zr *gzip.Reader
	cr *chunkReader
	br *backupReader
}

func (d *dataReader) Read(p []byte) (int, error) {
	n, err := d.zr.Read(p)
	if err == io.EOF {
		if extra, cerr := io.Copy(io.Discard, d.cr); cerr != nil {
			err = d.br.damaged(cerr)
		} else if extra > 0 {
			err = fmt.Errorf("%w: %d bytes follow the compressed data", ErrBackupDamaged, extra)
		}
		return n, err
	}
	if err != nil {
		err = d.br.damaged(err)
	}
	return n, err
}

// checkSum reads the checksum and compares it with what was read, then
// checks that nothing follows.
func (br *backupReader) checkSum() error {
	want := br.h.Sum(nil)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(br.r, got); err != nil {
		return br.damaged(err)
	}
	br.n += int64(len(got))
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: checksum mismatch (the file was changed or corrupted)", ErrBackupDamaged)
	}
	if _, err := br.r.ReadByte(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: bytes follow the checksum", ErrBackupDamaged)
	}
	return nil
}

type chunkReader struct {
	br   *backupReader
	left int  // bytes left in the current chunk
	done bool // the end of the chunks was read
}

func (cr *chunkReader) Read(p []byte) (int, error) {
	if cr.done {
		return 0, io.EOF
	}
	if cr.left == 0 {
		var lenBuf [4]byte
		if err := cr.br.readFull(lenBuf[:]); err != nil {
			return 0, cr.br.damaged(err)
		}
		size := binary.BigEndian.Uint32(lenBuf[:])
		if size == 0 {
			cr.done = true
			return 0, io.EOF
		}
		if size > maxBackupChunk {
			return 0, fmt.Errorf("%w: a chunk of %d bytes", ErrBackupDamaged, size)
		}
		cr.left = int(size)
	}
	p = p[:min(len(p), cr.left)]
	if err := cr.br.readFull(p); err != nil {
		return 0, cr.br.damaged(err)
	}
	cr.left -= len(p)
	return len(p), nil
}
