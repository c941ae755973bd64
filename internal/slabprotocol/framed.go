package slabprotocol

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/thrift/lib/go/thrift"
)

// frameHeaderLen is the length prefix of a frame.
const frameHeaderLen = 4

// frameGrowStep is the most a frame buffer grows by before the bytes for
// it have arrived.
const frameGrowStep = 64 << 10

// keptFrameBuffer is the largest frame buffer kept for the next frames.
const keptFrameBuffer = 1 << 20

// ReadBody reads a frame body of size bytes from r into f, from its
// start. The buffer grows with the bytes that arrive, at most doubling,
// so that a peer announcing a large frame and sending little of it costs
// little memory. When r fails, f holds the bytes that did arrive.
func (f *Frame) ReadBody(r io.Reader, size int) error {
	f.Pos = 0
	if cap(f.Buf) >= size {
		f.Buf = f.Buf[:size]
		n, err := io.ReadFull(r, f.Buf)
		f.Buf = f.Buf[:n]
		return err
	}
	f.Buf = f.Buf[:0]
	for len(f.Buf) < size {
		n := len(f.Buf)
		step := min(size-n, max(n, frameGrowStep))
		if cap(f.Buf) < n+step {
			grown := make([]byte, n, n+step)
			copy(grown, f.Buf)
			f.Buf = grown
		}
		f.Buf = f.Buf[:n+step]
		read, err := io.ReadFull(r, f.Buf[n:])
		if err != nil {
			f.Buf = f.Buf[:n+read]
			return err
		}
	}
	return nil
}

// OutFrame is a frame being written: room for its length, then the
// message, which the transport's writes append.
type OutFrame struct {
	Out []byte
}

// NewOutFrame is an empty OutFrame.
func NewOutFrame() OutFrame { return OutFrame{Out: make([]byte, frameHeaderLen, 512)} }

// Write appends to the message.
func (o *OutFrame) Write(p []byte) (int, error) {
	o.Out = append(o.Out, p...)
	return len(p), nil
}

// WriteByte implements io.ByteWriter.
func (o *OutFrame) WriteByte(c byte) error {
	o.Out = append(o.Out, c)
	return nil
}

// WriteString implements io.StringWriter.
func (o *OutFrame) WriteString(s string) (int, error) {
	o.Out = append(o.Out, s...)
	return len(s), nil
}

// Framed fills in the message's length and returns the whole frame, to
// be sent with one write.
func (o *OutFrame) Framed() []byte {
	binary.BigEndian.PutUint32(o.Out, uint32(len(o.Out)-frameHeaderLen))
	return o.Out
}

// Discard empties the frame for the next message, releasing a buffer
// that grew past keep bytes.
func (o *OutFrame) Discard(keep int) {
	if cap(o.Out) > keep {
		*o = NewOutFrame()
		return
	}
	o.Out = o.Out[:frameHeaderLen]
}

// FramedTransport is Thrift's framed transport reading each frame whole
// into memory, where a FrameProtocol reads its values (the Factory's
// protocols do over it). What it writes is buffered and sent, length
// first, with one write on Flush. The bytes on the wire are those of the
// library's framed transport; a message is one frame, as every Thrift
// peer sends it.
type FramedTransport struct {
	Frame
	OutFrame
	conn     thrift.TTransport
	reader   *bufio.Reader
	maxFrame int32
}

var _ thrift.TRichTransport = (*FramedTransport)(nil)

// NewFramedTransport frames the messages over conn (a socket), read
// through a buffer of bufSize bytes; cfg's MaxFrameSize bounds a frame.
func NewFramedTransport(conn thrift.TTransport, cfg *thrift.TConfiguration, bufSize int) *FramedTransport {
	return &FramedTransport{
		conn:     conn,
		reader:   bufio.NewReaderSize(conn, bufSize),
		maxFrame: cfg.GetMaxFrameSize(),
		OutFrame: NewOutFrame(),
	}
}

// nextFrame reads the next frame, once the current one has been read,
// and fails as the library's framed transport does.
func (t *FramedTransport) nextFrame() error {
	var header [frameHeaderLen]byte
	if _, err := io.ReadFull(t.reader, header[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(header[:])
	if size > uint32(t.maxFrame) {
		return thrift.NewTTransportException(thrift.UNKNOWN_TRANSPORT_EXCEPTION, fmt.Sprintf("Incorrect frame size (%d)", size))
	}
	if cap(t.Buf) > keptFrameBuffer && int(size) <= keptFrameBuffer {
		t.Buf = nil // a large frame's buffer is not kept for small ones
	}
	if err := t.ReadBody(t.reader, int(size)); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		return thrift.NewTTransportExceptionFromError(err)
	}
	return nil
}

// Read reads from the current frame, and from the next one once it has
// been read whole.
func (t *FramedTransport) Read(p []byte) (int, error) {
	for t.Pos >= len(t.Buf) { // an empty frame holds nothing to read
		if err := t.nextFrame(); err != nil {
			return 0, err
		}
	}
	return t.Frame.Read(p)
}

// ReadByte implements io.ByteReader.
func (t *FramedTransport) ReadByte() (byte, error) {
	for t.Pos >= len(t.Buf) {
		if err := t.nextFrame(); err != nil {
			return 0, err
		}
	}
	return t.Frame.ReadByte()
}

// Flush sends the message written, its length first, with one write.
func (t *FramedTransport) Flush(ctx context.Context) error {
	_, err := t.conn.Write(t.Framed())
	t.Discard(keptFrameBuffer)
	if err != nil {
		return thrift.NewTTransportExceptionFromError(err)
	}
	return t.conn.Flush(ctx)
}

// Open opens the connection.
func (t *FramedTransport) Open() error { return t.conn.Open() }

// IsOpen reports whether the connection is open.
func (t *FramedTransport) IsOpen() bool { return t.conn.IsOpen() }

// Close closes the connection.
func (t *FramedTransport) Close() error { return t.conn.Close() }

// FramedTransportFactory makes a FramedTransport of each connection a
// server accepts.
type FramedTransportFactory struct {
	Config  *thrift.TConfiguration
	BufSize int
}

// GetTransport implements thrift.TTransportFactory.
func (f FramedTransportFactory) GetTransport(conn thrift.TTransport) (thrift.TTransport, error) {
	return NewFramedTransport(conn, f.Config, f.BufSize), nil
}
