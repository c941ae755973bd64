package slabprotocol

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
)

// readStep is one read of a value through a protocol, rendered with its
// error so that two protocols' answers compare as strings.
type readStep func(ctx context.Context, p thrift.TProtocol) string

func describe(err error) string {
	if err == nil {
		return ""
	}
	if pe, ok := err.(thrift.TProtocolException); ok {
		return fmt.Sprintf(" error(type %d) %v", pe.TypeId(), err)
	}
	return fmt.Sprintf(" error %T %v", err, err)
}

// answer is what a read returned: its value when it succeeded, else its
// error alone (the library returns leftovers of earlier reads as the
// value of a failed one).
func answer(value string, err error) string {
	if err != nil {
		return describe(err)
	}
	return value
}

var readSteps = []readStep{
	func(ctx context.Context, p thrift.TProtocol) string {
		n, tt, id, err := p.ReadFieldBegin(ctx)
		return answer(fmt.Sprintf("field %q %d %d", n, tt, id), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		k, v, n, err := p.ReadMapBegin(ctx)
		return answer(fmt.Sprintf("map %d %d %d", k, v, n), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		e, n, err := p.ReadListBegin(ctx)
		return answer(fmt.Sprintf("list %d %d", e, n), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		e, n, err := p.ReadSetBegin(ctx)
		return answer(fmt.Sprintf("set %d %d", e, n), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadBool(ctx)
		return answer(fmt.Sprintf("bool %v", v), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadI16(ctx)
		return answer(fmt.Sprintf("i16 %d", v), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadI32(ctx)
		return answer(fmt.Sprintf("i32 %d", v), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadI64(ctx)
		return answer(fmt.Sprintf("i64 %d", v), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadDouble(ctx)
		return answer(fmt.Sprintf("double %x", v), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadString(ctx)
		return answer(fmt.Sprintf("string %q", v), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		v, err := p.ReadBinary(ctx)
		return answer(fmt.Sprintf("binary %x %v", v, v == nil), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		n, tt, seq, err := p.ReadMessageBegin(ctx)
		return answer(fmt.Sprintf("message %q %d %d", n, tt, seq), err)
	},
	func(ctx context.Context, p thrift.TProtocol) string {
		n, err := p.ReadStructBegin(ctx)
		return fmt.Sprintf("struct %q", n) + describe(err) + describe(p.ReadStructEnd(ctx)) + describe(p.ReadFieldEnd(ctx)) +
			describe(p.ReadListEnd(ctx)) + describe(p.ReadMapEnd(ctx)) + describe(p.ReadSetEnd(ctx))
	},
}

// randomFrame is a frame of small values: sizes that fit what follows,
// sizes past the end, negative and oversized sizes, stops and short tails.
func randomFrame(rng *rand.Rand) []byte {
	var f []byte
	for range rng.IntN(12) {
		switch rng.IntN(6) {
		case 5:
			// A message header's first word: version 1 with a type,
			// or another version.
			f = binary.BigEndian.AppendUint32(f, []uint32{0x80010001, 0x80010004, 0x80020001}[rng.IntN(3)])
		case 0:
			f = append(f, byte(rng.IntN(16)))
		case 1:
			f = binary.BigEndian.AppendUint32(f, uint32(rng.IntN(6)))
		case 2:
			f = binary.BigEndian.AppendUint32(f, []uint32{0xffffffff, 1 << 20, 1 << 31, 70}[rng.IntN(4)])
		case 3:
			f = append(f, "système"[:rng.IntN(6)]...)
		default:
			f = binary.BigEndian.AppendUint16(f, uint16(rng.Uint32()))
		}
	}
	return f
}

// frameOnly is a transport of one frame in memory, as thriftd's server
// transport is while it serves a request: past the frame's end, reads
// return io.EOF.
type frameOnly struct {
	Frame
}

func (*frameOnly) Open() error                       { return nil }
func (*frameOnly) IsOpen() bool                      { return true }
func (*frameOnly) Close() error                      { return nil }
func (*frameOnly) Write(p []byte) (int, error)       { return len(p), nil }
func (*frameOnly) Flush(context.Context) error       { return nil }
func (*frameOnly) WriteByte(byte) error              { return nil }
func (*frameOnly) WriteString(s string) (int, error) { return len(s), nil }

// readLikeTheLibrary reads frame with the reads of script through
// FrameProtocol and through the library's protocol over the same transport,
// and reports the first read that returns another value or error, or leaves
// the frame at another place.
func readLikeTheLibrary(frame []byte, script []int) error {
	ctx := context.Background()
	conf := &thrift.TConfiguration{MaxMessageSize: 64}
	libFrames := &frameOnly{Frame: Frame{Buf: frame}}
	lib := thrift.NewTBinaryProtocolConf(libFrames, conf)
	ourFrames := &frameOnly{Frame: Frame{Buf: frame}}
	ours := NewFrameProtocol(thrift.NewTBinaryProtocolConf(ourFrames, conf), &ourFrames.Frame, conf, Chunks{Size: 8 << 10, Own: 1 << 10})
	for i, s := range script {
		want, got := readSteps[s](ctx, lib), readSteps[s](ctx, ours)
		if want != got || libFrames.Pos != ourFrames.Pos {
			return fmt.Errorf("frame %x, read %d of %v:\nlibrary %s (at %d)\nframe   %s (at %d)",
				frame, i, script, want, libFrames.Pos, got, ourFrames.Pos)
		}
	}
	return nil
}

// TestFrameProtocolReadsAsTheLibrary reads random frames, well formed or
// not, with random sequences of reads, through FrameProtocol and through
// the library's protocol (readLikeTheLibrary).
func TestFrameProtocolReadsAsTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20000 {
		frame := randomFrame(rng)
		script := make([]int, 1+rng.IntN(6))
		for i := range script {
			script[i] = rng.IntN(len(readSteps))
		}
		if err := readLikeTheLibrary(frame, script); err != nil {
			t.Fatalf("round %d, %v", round, err)
		}
	}
}

// TestMessageHeadersReadAsTheLibrary reads message headers through
// FrameProtocol and the library's protocol (readLikeTheLibrary, whose
// size limit is 64): whole, cut, of every type byte, of another version,
// without the version word, and with a name over the limit.
func TestMessageHeadersReadAsTheLibrary(t *testing.T) {
	header := func(word uint32, name string, seq uint32) []byte {
		h := binary.BigEndian.AppendUint32(nil, word)
		h = binary.BigEndian.AppendUint32(h, uint32(len(name)))
		h = append(h, name...)
		return binary.BigEndian.AppendUint32(h, seq)
	}
	var frames [][]byte
	for _, word := range []uint32{0x80010001, 0x80010004, 0x800100ff, 0x80020001, 0x7fff0001} {
		frames = append(frames, header(word, "get_slice", 7), header(word, "", 0xffffffff))
	}
	frames = append(frames,
		header(0x80010001, strings.Repeat("n", 64), 1),
		header(0x80010001, strings.Repeat("n", 65), 1),
		// No version word: the name's length, the name, the type, the
		// sequence id.
		append(binary.BigEndian.AppendUint32(nil, 3), 'g', 'e', 't', 1, 0, 0, 0, 9))
	// Two headers in a row, read by the script {11, 11}: the second name
	// the same as the first, another, a prefix of it, and empty.
	for _, second := range []string{"get", "insert", "ge", ""} {
		frames = append(frames, append(header(0x80010001, "get", 1), header(0x80010001, second, 2)...))
	}
	for _, frame := range frames {
		for cut := range len(frame) + 1 {
			for _, script := range [][]int{{11}, {11, 0}, {11, 11}} {
				if err := readLikeTheLibrary(frame[:cut], script); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// FuzzFrameProtocolReads reads the fuzzer's frames with the fuzzer's reads
// (a byte each) through FrameProtocol and the library's protocol.
func FuzzFrameProtocolReads(f *testing.F) {
	f.Add([]byte{0x0b, 0x00, 0x01, 0, 0, 0, 3, 'a', 'b', 'c', 0}, []byte{0, 9, 0})
	f.Add([]byte{0x0f, 0xff, 0xff, 0xff, 0xff}, []byte{2, 3})
	f.Add([]byte{0, 0, 0, 70, 1}, []byte{10, 6})
	f.Add([]byte{0x80, 1, 0, 1, 0, 0, 0, 3, 'g', 'e', 't', 0, 0, 0, 7}, []byte{11})
	f.Fuzz(func(t *testing.T, frame, reads []byte) {
		script := make([]int, 0, 16)
		for _, r := range reads[:min(len(reads), 16)] {
			script = append(script, int(r)%len(readSteps))
		}
		if err := readLikeTheLibrary(frame, script); err != nil {
			t.Fatal(err)
		}
	})
}
