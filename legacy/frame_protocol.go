package legacy

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/apache/thrift/lib/go/thrift"
)

// frameProtocol is the binary protocol reading a request from its frame in
// memory. The library's ReadBinary reads every binary field (row keys,
// names, values) through a new bytes.Buffer, which allocates at least 512
// bytes and grows by copying: a batch_mutate of 100 columns made 200 such
// buffers. frameProtocol copies each field from the frame into a chunk it
// shares with the next fields, so a request's binary fields take a few
// allocations.
//
// A field may outlive its request (a schema definition kept in the catalog),
// so chunks are never reused: a retained field keeps at most its chunk
// alive. Fields from one chunk have their capacity cut at their length, so
// appending to one never writes over the next.
type frameProtocol struct {
	*thrift.TBinaryProtocol
	frames *frameTransport
	cfg    *thrift.TConfiguration
	chunk  []byte // unused end of the current chunk
}

const (
	// binaryChunkSize is the size of a chunk of binary fields.
	binaryChunkSize = 8 << 10
	// binaryOwnChunk is the size from which a field gets its own
	// allocation instead of a piece of a chunk.
	binaryOwnChunk = 1 << 10
)

func newFrameProtocol(p *thrift.TBinaryProtocol, frames *frameTransport, cfg *thrift.TConfiguration) *frameProtocol {
	return &frameProtocol{TBinaryProtocol: p, frames: frames, cfg: cfg}
}

// ReadBinary implements thrift.TProtocol as the library does (a length
// checked against the message size limit, an empty field not nil), with
// one copy from the frame.
func (p *frameProtocol) ReadBinary(ctx context.Context) ([]byte, error) {
	size, err := p.ReadI32(ctx)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("negative size: %d", size))
	}
	if limit := p.cfg.GetMaxMessageSize(); size > limit {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT, fmt.Errorf("size exceeded max allowed: %d", size))
	}
	if size == 0 {
		// Empty, not nil: Thrift's required fields (a column's value)
		// tell an empty value from a missing one.
		return []byte{}, nil
	}
	t := p.frames
	n := int(size)
	if len(t.frame)-t.pos < n {
		t.pos = len(t.frame)
		return nil, thrift.NewTProtocolException(io.EOF)
	}
	var buf []byte
	if n >= binaryOwnChunk {
		buf = make([]byte, n)
	} else {
		if len(p.chunk) < n {
			p.chunk = make([]byte, binaryChunkSize)
		}
		buf = p.chunk[:n:n]
		p.chunk = p.chunk[n:]
	}
	copy(buf, t.frame[t.pos:t.pos+n])
	t.pos += n
	return buf, nil
}

// The reads below take their bytes from the frame directly, where the
// library's read each value through the transport's interface, a byte or
// a few bytes at a time, asking the call's context for its deadline each
// time. Each reads only when the frame holds the whole value and its size
// is one the library accepts; otherwise it leaves the frame untouched and
// calls the library's method, which reads what is there and fails as it
// always did, with the same error.

// peek returns the next n bytes of the frame without consuming them, or
// nil if the frame holds fewer.
func (p *frameProtocol) peek(n int) []byte {
	t := p.frames
	if len(t.frame)-t.pos < n {
		return nil
	}
	return t.frame[t.pos : t.pos+n]
}

// sizeAccepted reports whether a container or string size is one the
// library accepts (checkSizeForProtocol).
func (p *frameProtocol) sizeAccepted(size int32) bool {
	return size >= 0 && size <= p.cfg.GetMaxMessageSize()
}

// ReadStructBegin implements thrift.TProtocol: a struct has no header.
func (p *frameProtocol) ReadStructBegin(context.Context) (string, error) { return "", nil }

// ReadStructEnd implements thrift.TProtocol.
func (p *frameProtocol) ReadStructEnd(context.Context) error { return nil }

// ReadFieldBegin implements thrift.TProtocol: the type, then the id unless
// the type is STOP.
func (p *frameProtocol) ReadFieldBegin(ctx context.Context) (string, thrift.TType, int16, error) {
	if b := p.peek(1); b != nil && b[0] == thrift.STOP {
		p.frames.pos++
		return "", thrift.STOP, 0, nil
	}
	b := p.peek(3)
	if b == nil {
		return p.TBinaryProtocol.ReadFieldBegin(ctx)
	}
	p.frames.pos += 3
	return "", thrift.TType(b[0]), int16(binary.BigEndian.Uint16(b[1:])), nil
}

// ReadFieldEnd implements thrift.TProtocol.
func (p *frameProtocol) ReadFieldEnd(context.Context) error { return nil }

// ReadMapBegin implements thrift.TProtocol: key type, value type, size.
func (p *frameProtocol) ReadMapBegin(ctx context.Context) (thrift.TType, thrift.TType, int, error) {
	b := p.peek(6)
	if b == nil || !p.sizeAccepted(int32(binary.BigEndian.Uint32(b[2:]))) {
		return p.TBinaryProtocol.ReadMapBegin(ctx)
	}
	p.frames.pos += 6
	return thrift.TType(b[0]), thrift.TType(b[1]), int(int32(binary.BigEndian.Uint32(b[2:]))), nil
}

// ReadMapEnd implements thrift.TProtocol.
func (p *frameProtocol) ReadMapEnd(context.Context) error { return nil }

// elementsHeader reads the header of a list or a set (element type, size)
// when the frame holds it and the size is accepted.
func (p *frameProtocol) elementsHeader() (thrift.TType, int, bool) {
	b := p.peek(5)
	if b == nil {
		return 0, 0, false
	}
	size := int32(binary.BigEndian.Uint32(b[1:]))
	if !p.sizeAccepted(size) {
		return 0, 0, false
	}
	p.frames.pos += 5
	return thrift.TType(b[0]), int(size), true
}

// ReadListBegin implements thrift.TProtocol: element type, size.
func (p *frameProtocol) ReadListBegin(ctx context.Context) (thrift.TType, int, error) {
	if elem, size, ok := p.elementsHeader(); ok {
		return elem, size, nil
	}
	return p.TBinaryProtocol.ReadListBegin(ctx)
}

// ReadListEnd implements thrift.TProtocol.
func (p *frameProtocol) ReadListEnd(context.Context) error { return nil }

// ReadSetBegin implements thrift.TProtocol: element type, size.
func (p *frameProtocol) ReadSetBegin(ctx context.Context) (thrift.TType, int, error) {
	if elem, size, ok := p.elementsHeader(); ok {
		return elem, size, nil
	}
	return p.TBinaryProtocol.ReadSetBegin(ctx)
}

// ReadSetEnd implements thrift.TProtocol.
func (p *frameProtocol) ReadSetEnd(context.Context) error { return nil }

// ReadBool implements thrift.TProtocol: 1 is true, any other byte false.
func (p *frameProtocol) ReadBool(ctx context.Context) (bool, error) {
	b := p.peek(1)
	if b == nil {
		return p.TBinaryProtocol.ReadBool(ctx)
	}
	p.frames.pos++
	return b[0] == 1, nil
}

// ReadI16 implements thrift.TProtocol.
func (p *frameProtocol) ReadI16(ctx context.Context) (int16, error) {
	b := p.peek(2)
	if b == nil {
		return p.TBinaryProtocol.ReadI16(ctx)
	}
	p.frames.pos += 2
	return int16(binary.BigEndian.Uint16(b)), nil
}

// ReadI32 implements thrift.TProtocol.
func (p *frameProtocol) ReadI32(ctx context.Context) (int32, error) {
	b := p.peek(4)
	if b == nil {
		return p.TBinaryProtocol.ReadI32(ctx)
	}
	p.frames.pos += 4
	return int32(binary.BigEndian.Uint32(b)), nil
}

// ReadI64 implements thrift.TProtocol.
func (p *frameProtocol) ReadI64(ctx context.Context) (int64, error) {
	b := p.peek(8)
	if b == nil {
		return p.TBinaryProtocol.ReadI64(ctx)
	}
	p.frames.pos += 8
	return int64(binary.BigEndian.Uint64(b)), nil
}

// ReadDouble implements thrift.TProtocol: the IEEE 754 bits of an i64.
func (p *frameProtocol) ReadDouble(ctx context.Context) (float64, error) {
	b := p.peek(8)
	if b == nil {
		return p.TBinaryProtocol.ReadDouble(ctx)
	}
	p.frames.pos += 8
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// ReadString implements thrift.TProtocol: length, then the bytes.
func (p *frameProtocol) ReadString(ctx context.Context) (string, error) {
	b := p.peek(4)
	if b == nil {
		return p.TBinaryProtocol.ReadString(ctx)
	}
	size := int32(binary.BigEndian.Uint32(b))
	if !p.sizeAccepted(size) {
		return p.TBinaryProtocol.ReadString(ctx)
	}
	body := p.peek(4 + int(size))
	if body == nil {
		return p.TBinaryProtocol.ReadString(ctx)
	}
	p.frames.pos += 4 + int(size)
	return string(body[4:]), nil
}
