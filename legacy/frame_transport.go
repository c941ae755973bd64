package legacy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
)

const (
	// frameHeaderLen is the length prefix of a frame.
	frameHeaderLen = 4
	// connReadBufferSize is the read buffer of a connection: small requests
	// arrive whole in one read.
	connReadBufferSize = 8 << 10
	// retainedBufferLimit is the largest frame or reply buffer a connection
	// keeps between requests; a larger one is released after use.
	retainedBufferLimit = 1 << 20
	// binaryVersion1Header is how an unframed strict binary message starts;
	// read as a frame length it betrays a client without framing.
	binaryVersion1Header = 0x8001
)

// frameTooLargeError is a frame whose announced length exceeds the limit.
type frameTooLargeError struct {
	size, limit uint32
}

func (e *frameTooLargeError) Error() string {
	msg := fmt.Sprintf("frame of %d bytes exceeds the %d-byte limit", e.size, e.limit)
	if e.size>>16 == binaryVersion1Header {
		msg += " (the length looks like an unframed binary-protocol message: the client must use the framed transport)"
	}
	return msg
}

// frameTransport is the framed transport of one connection, reused for all
// its requests. A whole frame is read before the processor sees it, so the
// processor reads from memory and cannot block on the network; the reply is
// built in memory and written, length prefix included, with one write.
// It implements thrift.TRichTransport so that the binary protocol uses it
// without a wrapper.
type frameTransport struct {
	conn   net.Conn
	reader *bufio.Reader
	limit  uint32

	// Frame is the current request frame, read by the protocol
	// (slabprotocol.FrameProtocol) from memory.
	slabprotocol.Frame

	// OutFrame is the reply being written (an AppendProtocol appends to it).
	slabprotocol.OutFrame

	// header holds a frame's size as it is read: a local array passed to
	// io.ReadFull would escape, one allocation a call.
	header [frameHeaderLen]byte

	flushes  int   // replies written since the counter was last reset
	writeErr error // the first failed write; the connection is then unusable

	// writeTimeout bounds the writing of a reply (0: no limit), so that a
	// client that reads nothing does not hold the connection forever.
	writeTimeout time.Duration

	// observer, when set, is told of the bytes of every frame.
	observer Observer
}

var _ thrift.TRichTransport = (*frameTransport)(nil)

func newFrameTransport(conn net.Conn, limit uint32) *frameTransport {
	return &frameTransport{
		conn:     conn,
		reader:   bufio.NewReaderSize(conn, connReadBufferSize),
		limit:    limit,
		OutFrame: slabprotocol.NewOutFrame(),
	}
}

// readFrame waits for the next request frame and reads it whole. It
// returns io.EOF if the client closed the connection between requests.
func (t *frameTransport) readFrame() error {
	if _, err := io.ReadFull(t.reader, t.header[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(t.header[:])
	if size > t.limit {
		return &frameTooLargeError{size: size, limit: t.limit}
	}
	// The buffer grows with the bytes that arrive: a client announcing a
	// large frame and sending little of it costs little memory.
	if err := t.ReadBody(t.reader, int(size)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("read frame of %d bytes: %w", size, err)
	}
	if t.observer != nil {
		t.observer.BytesReceived(frameHeaderLen + int(size))
	}
	return nil
}

// endRequest releases the request frame if it was large, so that an idle
// connection holds little memory.
func (t *frameTransport) endRequest() {
	if cap(t.Buf) > retainedBufferLimit {
		t.Buf = nil
	}
	t.Buf = t.Buf[:0]
	t.Pos = 0
}

// Flush writes the reply as one frame.
func (t *frameTransport) Flush(ctx context.Context) error {
	if t.writeErr != nil {
		return t.writeErr
	}
	if t.writeTimeout > 0 {
		_ = t.conn.SetWriteDeadline(time.Now().Add(t.writeTimeout))
	}
	n, err := t.conn.Write(t.Framed())
	if t.observer != nil {
		t.observer.BytesSent(n)
	}
	t.Discard(retainedBufferLimit)
	t.flushes++
	if err != nil {
		t.writeErr = thrift.NewTTransportExceptionFromError(fmt.Errorf("write reply: %w", err))
		return t.writeErr
	}
	return nil
}

// Open implements thrift.TTransport; the connection is open already.
func (t *frameTransport) Open() error { return nil }

// IsOpen implements thrift.TTransport.
func (t *frameTransport) IsOpen() bool { return t.writeErr == nil }

// Close closes the connection.
func (t *frameTransport) Close() error { return t.conn.Close() }
