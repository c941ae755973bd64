package slabprotocol

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/thrift/lib/go/thrift"
)

// slabSize is the size of the blocks binary fields are read into.
const slabSize = 64 << 10

// Factory makes the protocol of each connection.
type Factory struct{ cfg *thrift.TConfiguration }

// NewFactory is a Factory of protocols configured by cfg (its message size
// bounds a binary field).
func NewFactory(cfg *thrift.TConfiguration) Factory { return Factory{cfg: cfg} }

// GetProtocol implements thrift.TProtocolFactory.
func (f Factory) GetProtocol(t thrift.TTransport) thrift.TProtocol {
	if ft, ok := t.(*FramedTransport); ok {
		// The frames are in memory: every value is read from the frame
		// read, and appended to the frame written.
		reads := NewFrameProtocol(thrift.NewTBinaryProtocolConf(t, f.cfg), &ft.Frame, f.cfg, Chunks{Size: slabSize, Own: slabSize/4 + 1})
		return NewAppendProtocol(reads, &ft.OutFrame)
	}
	p := &slabProtocol{TBinaryProtocol: thrift.NewTBinaryProtocolConf(t, f.cfg), trans: t, maxSize: f.cfg.GetMaxMessageSize()}
	if fr, ok := t.(remainingBytes); ok {
		p.frame = fr
	}
	return p
}

// remainingBytes is a transport that knows how much of the current frame
// is left to read.
type remainingBytes interface{ RemainingBytes() uint64 }

// slabProtocol is the binary protocol with a cheaper ReadBinary. The
// library's reads every binary field (a column's name, its value) through
// a bytes.Buffer that starts at 512 bytes, so a page of small columns
// costs 1 KB of zeroed garbage per column; here fields are carved from
// shared 64 KB blocks, sized exactly. A field is trusted to be no longer
// than what its frame has left, so a corrupt length cannot make it
// allocate more than a frame.
//
// Fields share their block: one kept alive keeps the block alive, and
// appending to one never writes over the next (capacity cut at length).
type slabProtocol struct {
	*thrift.TBinaryProtocol
	trans   io.Reader
	frame   remainingBytes
	maxSize int32
	slab    []byte
}

// ReadBinary implements thrift.TProtocol.
func (p *slabProtocol) ReadBinary(ctx context.Context) ([]byte, error) {
	size, err := p.ReadI32(ctx)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("negative size: %d", size))
	}
	if size > p.maxSize || (p.frame != nil && uint64(size) > p.frame.RemainingBytes()) {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT, fmt.Errorf("binary field of %d bytes exceeds its frame", size))
	}
	if size == 0 {
		return []byte{}, nil
	}
	b := p.take(int(size))
	if _, err := io.ReadFull(p.trans, b); err != nil {
		return nil, thrift.NewTProtocolException(err)
	}
	return b, nil
}

// take returns n fresh bytes: from the current block, a new one, or, for
// a field larger than a quarter of a block, an allocation of its own.
func (p *slabProtocol) take(n int) []byte {
	if n > slabSize/4 {
		return make([]byte, n)
	}
	if cap(p.slab)-len(p.slab) < n {
		p.slab = make([]byte, 0, slabSize)
	}
	start := len(p.slab)
	p.slab = p.slab[:start+n]
	return p.slab[start : start+n : start+n]
}
