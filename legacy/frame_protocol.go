package legacy

import (
	"context"
	"fmt"
	"io"

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
