package migrate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// Sink receives the converted keyspace.
type Sink interface {
	// Prepare creates the keyspace and tables (idempotently).
	Prepare(ctx context.Context, schema *Schema) error
	// Write writes statements of one partition. The sink must not keep
	// stmts or their bytes after it returns.
	Write(ctx context.Context, stmts []Statement) error
	// Flush returns once everything written so far is durable in the
	// target (acknowledged by the cluster, synced to disk).
	Flush(ctx context.Context) error
	// Close flushes and releases the sink.
	Close() error
}

// ResumableSink is a sink whose output is a byte stream that a resumed run
// cuts back to a checkpointed length and appends to.
type ResumableSink interface {
	Sink
	// Offset is the output's length after the last Flush.
	Offset() int64
	// Resume drops the output past offset and continues writing there.
	Resume(ctx context.Context, offset int64) error
}

// ResumeAwareSink is a sink that needs to know it continues an interrupted
// run: increments written before the interruption must not be applied
// twice.
type ResumeAwareSink interface {
	Sink
	// Resuming is called before the first Write of a resumed run.
	Resuming(ctx context.Context) error
}

// FileSink writes a cqlsh-runnable script: a header comment, the DDL, then
// one statement per line (text values may span lines).
type FileSink struct {
	path   string
	f      *os.File
	w      *bufio.Writer
	offset int64 // bytes handed to w
	synced int64 // bytes synced by the last Flush
	buf    []byte
	// Now stamps the header (the moment TTLs are relative to).
	now func() time.Time
}

// FileHeaderPrefix starts the script's first line; the Unix time that
// follows is the moment the script's TTLs were computed for.
const FileHeaderPrefix = "-- thriftbridge convert script; TTLs as of unix time "

// CreateFileSink opens (creating if needed) the script at path. Nothing is
// truncated until Prepare (a new script) or Resume (a resumed one). now
// stamps the header; nil is time.Now.
func CreateFileSink(path string, now func() time.Time) (*FileSink, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open output script: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &FileSink{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20), now: now}, nil
}

// Path is the script's path.
func (s *FileSink) Path() string { return s.path }

// Prepare starts a new script: header and DDL.
func (s *FileSink) Prepare(ctx context.Context, schema *Schema) error {
	if err := s.truncate(0); err != nil {
		return err
	}
	s.buf = append(s.buf[:0], FileHeaderPrefix...)
	s.buf = strconv.AppendInt(s.buf, s.now().Unix(), 10)
	s.buf = append(s.buf, '\n')
	for _, st := range schema.Statements() {
		s.buf = st.AppendInline(s.buf)
		s.buf = append(s.buf, '\n')
	}
	return s.put(s.buf)
}

// Write appends stmts, one per line.
func (s *FileSink) Write(ctx context.Context, stmts []Statement) error {
	s.buf = s.buf[:0]
	for i := range stmts {
		s.buf = stmts[i].AppendInline(s.buf)
		s.buf = append(s.buf, '\n')
	}
	return s.put(s.buf)
}

func (s *FileSink) put(b []byte) error {
	n, err := s.w.Write(b)
	s.offset += int64(n)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	return nil
}

// Flush writes buffered statements and syncs the file.
func (s *FileSink) Flush(ctx context.Context) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	if s.synced != s.offset {
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", s.path, err)
		}
		s.synced = s.offset
	}
	return nil
}

// Offset implements ResumableSink.
func (s *FileSink) Offset() int64 { return s.synced }

// Resume implements ResumableSink.
func (s *FileSink) Resume(ctx context.Context, offset int64) error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if st.Size() < offset {
		return fmt.Errorf("resume %s: the script has %d bytes, fewer than the %d the checkpoint recorded", s.path, st.Size(), offset)
	}
	return s.truncate(offset)
}

func (s *FileSink) truncate(offset int64) error {
	s.w.Reset(s.f)
	if err := s.f.Truncate(offset); err != nil {
		return fmt.Errorf("truncate %s: %w", s.path, err)
	}
	if _, err := s.f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("seek %s: %w", s.path, err)
	}
	s.offset, s.synced = offset, offset
	return nil
}

// Close flushes and closes the script.
func (s *FileSink) Close() error {
	err := s.Flush(context.Background())
	return errors.Join(err, s.f.Close())
}
