package legacy

import (
	"context"
	"encoding/binary"
	"math"

	"github.com/apache/thrift/lib/go/thrift"
)

// replyProtocol is the binary protocol writing a reply into its frame in
// memory. The library's protocol writes each value through the transport's
// interface, a byte or a few bytes at a time, checking an error that the
// in-memory reply never has: a get_range_slices reply of 10 rows of 20
// columns made over 2,000 such calls, and writing it was a sixth of
// thriftd's CPU. replyProtocol appends each value to the reply directly,
// byte for byte what the library writes. The message header (strict or
// not), single bytes (no field of cassandra.thrift is one; go vet wants
// the name WriteByte for io.ByteWriter's signature), reading and flushing
// stay the library's, which writes to the same reply.
type replyProtocol struct {
	*thrift.TBinaryProtocol
	frames *frameTransport
}

func newReplyProtocol(p *thrift.TBinaryProtocol, frames *frameTransport) *replyProtocol {
	return &replyProtocol{TBinaryProtocol: p, frames: frames}
}

// WriteStructBegin implements thrift.TProtocol: a struct has no header.
func (p *replyProtocol) WriteStructBegin(context.Context, string) error { return nil }

// WriteStructEnd implements thrift.TProtocol.
func (p *replyProtocol) WriteStructEnd(context.Context) error { return nil }

// WriteFieldBegin implements thrift.TProtocol: the type, then the id.
func (p *replyProtocol) WriteFieldBegin(_ context.Context, _ string, typeID thrift.TType, id int16) error {
	p.frames.Out = append(p.frames.Out, byte(typeID), byte(uint16(id)>>8), byte(id))
	return nil
}

// WriteFieldEnd implements thrift.TProtocol.
func (p *replyProtocol) WriteFieldEnd(context.Context) error { return nil }

// WriteFieldStop implements thrift.TProtocol.
func (p *replyProtocol) WriteFieldStop(context.Context) error {
	p.frames.Out = append(p.frames.Out, thrift.STOP)
	return nil
}

// WriteMapBegin implements thrift.TProtocol: key type, value type, size.
func (p *replyProtocol) WriteMapBegin(_ context.Context, keyType, valueType thrift.TType, size int) error {
	p.frames.Out = binary.BigEndian.AppendUint32(append(p.frames.Out, byte(keyType), byte(valueType)), uint32(size))
	return nil
}

// WriteMapEnd implements thrift.TProtocol.
func (p *replyProtocol) WriteMapEnd(context.Context) error { return nil }

// WriteListBegin implements thrift.TProtocol: element type, size.
func (p *replyProtocol) WriteListBegin(_ context.Context, elemType thrift.TType, size int) error {
	p.frames.Out = binary.BigEndian.AppendUint32(append(p.frames.Out, byte(elemType)), uint32(size))
	return nil
}

// WriteListEnd implements thrift.TProtocol.
func (p *replyProtocol) WriteListEnd(context.Context) error { return nil }

// WriteSetBegin implements thrift.TProtocol: element type, size.
func (p *replyProtocol) WriteSetBegin(_ context.Context, elemType thrift.TType, size int) error {
	p.frames.Out = binary.BigEndian.AppendUint32(append(p.frames.Out, byte(elemType)), uint32(size))
	return nil
}

// WriteSetEnd implements thrift.TProtocol.
func (p *replyProtocol) WriteSetEnd(context.Context) error { return nil }

// WriteBool implements thrift.TProtocol.
func (p *replyProtocol) WriteBool(_ context.Context, value bool) error {
	b := byte(0)
	if value {
		b = 1
	}
	p.frames.Out = append(p.frames.Out, b)
	return nil
}

// WriteI16 implements thrift.TProtocol.
func (p *replyProtocol) WriteI16(_ context.Context, value int16) error {
	p.frames.Out = binary.BigEndian.AppendUint16(p.frames.Out, uint16(value))
	return nil
}

// WriteI32 implements thrift.TProtocol.
func (p *replyProtocol) WriteI32(_ context.Context, value int32) error {
	p.frames.Out = binary.BigEndian.AppendUint32(p.frames.Out, uint32(value))
	return nil
}

// WriteI64 implements thrift.TProtocol.
func (p *replyProtocol) WriteI64(_ context.Context, value int64) error {
	p.frames.Out = binary.BigEndian.AppendUint64(p.frames.Out, uint64(value))
	return nil
}

// WriteDouble implements thrift.TProtocol: the IEEE 754 bits as an i64.
func (p *replyProtocol) WriteDouble(_ context.Context, value float64) error {
	p.frames.Out = binary.BigEndian.AppendUint64(p.frames.Out, math.Float64bits(value))
	return nil
}

// WriteString implements thrift.TProtocol: length, then the bytes.
func (p *replyProtocol) WriteString(_ context.Context, value string) error {
	p.frames.Out = append(binary.BigEndian.AppendUint32(p.frames.Out, uint32(len(value))), value...)
	return nil
}

// WriteBinary implements thrift.TProtocol: length, then the bytes.
func (p *replyProtocol) WriteBinary(_ context.Context, value []byte) error {
	p.frames.Out = append(binary.BigEndian.AppendUint32(p.frames.Out, uint32(len(value))), value...)
	return nil
}
