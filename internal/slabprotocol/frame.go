package slabprotocol

import (
	"context"
	"encoding/binary"
	"io"
	"math"

	"github.com/apache/thrift/lib/go/thrift"
)

// Frame is one frame of Thrift's framed transport, whole in memory, and
// the position of the next byte to read in it. A transport that reads
// frames whole (FramedTransport, thriftd's server transport) holds one,
// and a FrameProtocol reads its values from it directly.
type Frame struct {
	Buf []byte // the frame's bytes
	Pos int    // read position in Buf
}

// Read reads from the frame; past its end it returns io.EOF (a message
// never continues into the next frame).
func (f *Frame) Read(p []byte) (int, error) {
	if f.Pos >= len(f.Buf) {
		return 0, io.EOF
	}
	n := copy(p, f.Buf[f.Pos:])
	f.Pos += n
	return n, nil
}

// ReadByte implements io.ByteReader.
func (f *Frame) ReadByte() (byte, error) {
	if f.Pos >= len(f.Buf) {
		return 0, io.EOF
	}
	c := f.Buf[f.Pos]
	f.Pos++
	return c, nil
}

// RemainingBytes is what is left of the frame; the protocol uses it to
// refuse lengths that cannot fit.
func (f *Frame) RemainingBytes() uint64 { return uint64(len(f.Buf) - f.Pos) }

// peek returns the next n bytes of the frame without consuming them, or
// nil if the frame holds fewer.
func (f *Frame) peek(n int) []byte {
	if len(f.Buf)-f.Pos < n {
		return nil
	}
	return f.Buf[f.Pos : f.Pos+n]
}

// Chunks is how a FrameProtocol hands out the binary fields it reads:
// pieces of chunks of Size bytes that the next fields share, and an
// allocation of its own for a field of Own bytes or more.
type Chunks struct {
	Size, Own int
}

// FrameProtocol is the binary protocol reading a message from its frame
// in memory. The library's binary protocol reads each value through the
// transport's interface, a byte or a few bytes at a time, asking the
// call's context for its deadline each time, and every binary field
// (row keys, names, values) through a new bytes.Buffer of at least 512
// bytes. FrameProtocol takes values from the frame directly, and copies
// each binary field into a chunk it shares with the next fields.
//
// Each read takes its bytes from the frame only when the frame holds the
// whole value and its size is one the library accepts; otherwise it
// leaves the frame untouched and calls the library's method, which reads
// what is there (through the transport, which may read the next frame)
// and fails as it always did, with the same error.
//
// A field may outlive its message (thriftd keeps a schema definition in
// its catalog), so chunks are never reused: a retained field keeps at
// most its chunk alive. Fields from one chunk have their capacity cut at
// their length, so appending to one never writes over the next.
type FrameProtocol struct {
	*thrift.TBinaryProtocol
	frame   *Frame
	maxSize int32
	chunks  Chunks
	chunk   []byte // unused end of the current chunk
	// name is the method name of the last message header read from the
	// frame: a connection tends to call one method again and again, and a
	// name equal to the last one is returned without a new string.
	name string
}

// NewFrameProtocol is the protocol reading from frame, which the
// transport under p fills; cfg's message size bounds a field or a
// container.
func NewFrameProtocol(p *thrift.TBinaryProtocol, frame *Frame, cfg *thrift.TConfiguration, chunks Chunks) *FrameProtocol {
	return &FrameProtocol{TBinaryProtocol: p, frame: frame, maxSize: cfg.GetMaxMessageSize(), chunks: chunks}
}

// Frame is the frame the protocol reads from: a reader of the protocol's
// encoding may read a value from its bytes and move its position past it.
func (p *FrameProtocol) Frame() *Frame { return p.frame }

// MaxSize is the largest size of a container or a string the protocol
// accepts (the configuration's message size).
func (p *FrameProtocol) MaxSize() int32 { return p.maxSize }

// sizeAccepted reports whether a container or string size is one the
// library accepts (checkSizeForProtocol).
func (p *FrameProtocol) sizeAccepted(size int32) bool {
	return size >= 0 && size <= p.maxSize
}

// ReadBinary implements thrift.TProtocol: length, then the bytes, copied
// once from the frame. An empty field is empty, not nil: Thrift's required
// fields (a column's value) tell an empty value from a missing one.
func (p *FrameProtocol) ReadBinary(ctx context.Context) ([]byte, error) {
	f := p.frame
	b := f.peek(4)
	if b == nil {
		return p.TBinaryProtocol.ReadBinary(ctx)
	}
	size := int32(binary.BigEndian.Uint32(b))
	if !p.sizeAccepted(size) || f.peek(4+int(size)) == nil {
		return p.TBinaryProtocol.ReadBinary(ctx)
	}
	f.Pos += 4
	if size == 0 {
		return []byte{}, nil
	}
	n := int(size)
	var buf []byte
	if n >= p.chunks.Own {
		buf = make([]byte, n)
	} else {
		if len(p.chunk) < n {
			p.chunk = make([]byte, p.chunks.Size)
		}
		buf = p.chunk[:n:n]
		p.chunk = p.chunk[n:]
	}
	copy(buf, f.Buf[f.Pos:f.Pos+n])
	f.Pos += n
	return buf, nil
}

// ReadMessageBegin implements thrift.TProtocol: a versioned header (the
// version and the message type, the name, the sequence id) is taken from
// the frame when the frame holds it whole; an old header without the
// version word, or one cut short, is read by the library.
func (p *FrameProtocol) ReadMessageBegin(ctx context.Context) (string, thrift.TMessageType, int32, error) {
	if b := p.frame.peek(8); b != nil {
		word := binary.BigEndian.Uint32(b)
		size := int32(binary.BigEndian.Uint32(b[4:]))
		if word&thrift.VERSION_MASK == thrift.VERSION_1 && p.sizeAccepted(size) {
			if header := p.frame.peek(12 + int(size)); header != nil {
				p.frame.Pos += len(header)
				if name := header[8 : 8+size]; string(name) != p.name {
					p.name = string(name)
				}
				return p.name, thrift.TMessageType(word & 0xff), int32(binary.BigEndian.Uint32(header[8+size:])), nil
			}
		}
	}
	return p.TBinaryProtocol.ReadMessageBegin(ctx)
}

// ReadStructBegin implements thrift.TProtocol: a struct has no header.
func (p *FrameProtocol) ReadStructBegin(context.Context) (string, error) { return "", nil }

// ReadStructEnd implements thrift.TProtocol.
func (p *FrameProtocol) ReadStructEnd(context.Context) error { return nil }

// ReadFieldBegin implements thrift.TProtocol: the type, then the id unless
// the type is STOP.
func (p *FrameProtocol) ReadFieldBegin(ctx context.Context) (string, thrift.TType, int16, error) {
	if b := p.frame.peek(1); b != nil && b[0] == thrift.STOP {
		p.frame.Pos++
		return "", thrift.STOP, 0, nil
	}
	b := p.frame.peek(3)
	if b == nil {
		return p.TBinaryProtocol.ReadFieldBegin(ctx)
	}
	p.frame.Pos += 3
	return "", thrift.TType(b[0]), int16(binary.BigEndian.Uint16(b[1:])), nil
}

// ReadFieldEnd implements thrift.TProtocol.
func (p *FrameProtocol) ReadFieldEnd(context.Context) error { return nil }

// ReadMapBegin implements thrift.TProtocol: key type, value type, size.
func (p *FrameProtocol) ReadMapBegin(ctx context.Context) (thrift.TType, thrift.TType, int, error) {
	b := p.frame.peek(6)
	if b == nil || !p.sizeAccepted(int32(binary.BigEndian.Uint32(b[2:]))) {
		return p.TBinaryProtocol.ReadMapBegin(ctx)
	}
	p.frame.Pos += 6
	return thrift.TType(b[0]), thrift.TType(b[1]), int(int32(binary.BigEndian.Uint32(b[2:]))), nil
}

// ReadMapEnd implements thrift.TProtocol.
func (p *FrameProtocol) ReadMapEnd(context.Context) error { return nil }

// elementsHeader reads the header of a list or a set (element type, size)
// when the frame holds it and the size is accepted.
func (p *FrameProtocol) elementsHeader() (thrift.TType, int, bool) {
	b := p.frame.peek(5)
	if b == nil {
		return 0, 0, false
	}
	size := int32(binary.BigEndian.Uint32(b[1:]))
	if !p.sizeAccepted(size) {
		return 0, 0, false
	}
	p.frame.Pos += 5
	return thrift.TType(b[0]), int(size), true
}

// ReadListBegin implements thrift.TProtocol: element type, size.
func (p *FrameProtocol) ReadListBegin(ctx context.Context) (thrift.TType, int, error) {
	if elem, size, ok := p.elementsHeader(); ok {
		return elem, size, nil
	}
	return p.TBinaryProtocol.ReadListBegin(ctx)
}

// ReadListEnd implements thrift.TProtocol.
func (p *FrameProtocol) ReadListEnd(context.Context) error { return nil }

// ReadSetBegin implements thrift.TProtocol: element type, size.
func (p *FrameProtocol) ReadSetBegin(ctx context.Context) (thrift.TType, int, error) {
	if elem, size, ok := p.elementsHeader(); ok {
		return elem, size, nil
	}
	return p.TBinaryProtocol.ReadSetBegin(ctx)
}

// ReadSetEnd implements thrift.TProtocol.
func (p *FrameProtocol) ReadSetEnd(context.Context) error { return nil }

// ReadBool implements thrift.TProtocol: 1 is true, any other byte false.
func (p *FrameProtocol) ReadBool(ctx context.Context) (bool, error) {
	b := p.frame.peek(1)
	if b == nil {
		return p.TBinaryProtocol.ReadBool(ctx)
	}
	p.frame.Pos++
	return b[0] == 1, nil
}

// ReadI16 implements thrift.TProtocol.
func (p *FrameProtocol) ReadI16(ctx context.Context) (int16, error) {
	b := p.frame.peek(2)
	if b == nil {
		return p.TBinaryProtocol.ReadI16(ctx)
	}
	p.frame.Pos += 2
	return int16(binary.BigEndian.Uint16(b)), nil
}

// ReadI32 implements thrift.TProtocol.
func (p *FrameProtocol) ReadI32(ctx context.Context) (int32, error) {
	b := p.frame.peek(4)
	if b == nil {
		return p.TBinaryProtocol.ReadI32(ctx)
	}
	p.frame.Pos += 4
	return int32(binary.BigEndian.Uint32(b)), nil
}

// ReadI64 implements thrift.TProtocol.
func (p *FrameProtocol) ReadI64(ctx context.Context) (int64, error) {
	b := p.frame.peek(8)
	if b == nil {
		return p.TBinaryProtocol.ReadI64(ctx)
	}
	p.frame.Pos += 8
	return int64(binary.BigEndian.Uint64(b)), nil
}

// ReadDouble implements thrift.TProtocol: the IEEE 754 bits of an i64.
func (p *FrameProtocol) ReadDouble(ctx context.Context) (float64, error) {
	b := p.frame.peek(8)
	if b == nil {
		return p.TBinaryProtocol.ReadDouble(ctx)
	}
	p.frame.Pos += 8
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// ReadString implements thrift.TProtocol: length, then the bytes.
func (p *FrameProtocol) ReadString(ctx context.Context) (string, error) {
	b := p.frame.peek(4)
	if b == nil {
		return p.TBinaryProtocol.ReadString(ctx)
	}
	size := int32(binary.BigEndian.Uint32(b))
	if !p.sizeAccepted(size) {
		return p.TBinaryProtocol.ReadString(ctx)
	}
	body := p.frame.peek(4 + int(size))
	if body == nil {
		return p.TBinaryProtocol.ReadString(ctx)
	}
	p.frame.Pos += 4 + int(size)
	return string(body[4:]), nil
}
