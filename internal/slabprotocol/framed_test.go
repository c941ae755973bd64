package slabprotocol

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
)

// writeMessage writes a call with a struct of a string, an i32, a binary
// field and a list, then flushes.
func writeMessage(ctx context.Context, p thrift.TProtocol, seq int32, value []byte) error {
	steps := []func() error{
		func() error { return p.WriteMessageBegin(ctx, "get_slice", thrift.CALL, seq) },
		func() error { return p.WriteStructBegin(ctx, "args") },
		func() error { return p.WriteFieldBegin(ctx, "key", thrift.STRING, 1) },
		func() error { return p.WriteString(ctx, "row") },
		func() error { return p.WriteFieldBegin(ctx, "count", thrift.I32, 2) },
		func() error { return p.WriteI32(ctx, 100) },
		func() error { return p.WriteFieldBegin(ctx, "value", thrift.STRING, 3) },
		func() error { return p.WriteBinary(ctx, value) },
		func() error { return p.WriteFieldBegin(ctx, "names", thrift.LIST, 4) },
		func() error { return p.WriteListBegin(ctx, thrift.STRING, 2) },
		func() error { return p.WriteBinary(ctx, []byte("a")) },
		func() error { return p.WriteBinary(ctx, []byte{}) },
		func() error { return p.WriteFieldStop(ctx) },
		func() error { return p.WriteMessageEnd(ctx) },
		func() error { return p.Flush(ctx) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// TestFramedTransportWritesWhatTheLibraryWrites: the same calls give the
// same bytes on the wire as the library's framed transport and binary
// protocol.
func TestFramedTransportWritesWhatTheLibraryWrites(t *testing.T) {
	ctx := context.Background()
	conf := &thrift.TConfiguration{}
	libBuf, ourBuf := thrift.NewTMemoryBuffer(), thrift.NewTMemoryBuffer()
	lib := thrift.NewTBinaryProtocolConf(thrift.NewTFramedTransportConf(libBuf, conf), conf)
	ours := NewFactory(conf).GetProtocol(NewFramedTransport(ourBuf, conf, 4096))
	for seq, value := range [][]byte{[]byte("v"), bytes.Repeat([]byte{7}, 3000), {}} {
		if err := writeMessage(ctx, lib, int32(seq), value); err != nil {
			t.Fatal(err)
		}
		if err := writeMessage(ctx, ours, int32(seq), value); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(libBuf.Bytes(), ourBuf.Bytes()) {
		t.Fatalf("library wrote\n%x\nframed transport wrote\n%x", libBuf.Bytes(), ourBuf.Bytes())
	}
}

// readStreamLikeTheLibrary reads a stream of frames with the reads of
// script through the library's framed transport and binary protocol and
// through FramedTransport and the Factory's protocol, and reports the
// first read that answers otherwise.
func readStreamLikeTheLibrary(t *testing.T, stream []byte, script []int) {
	t.Helper()
	ctx := context.Background()
	conf := &thrift.TConfiguration{MaxMessageSize: 64, MaxFrameSize: 256}
	libBuf, ourBuf := thrift.NewTMemoryBuffer(), thrift.NewTMemoryBuffer()
	libBuf.Write(stream)
	ourBuf.Write(stream)
	lib := thrift.NewTBinaryProtocolConf(thrift.NewTFramedTransportConf(libBuf, conf), conf)
	ours := NewFactory(conf).GetProtocol(NewFramedTransport(ourBuf, conf, 4096))
	for i, s := range script {
		want, got := readSteps[s](ctx, lib), readSteps[s](ctx, ours)
		if want != got {
			t.Fatalf("stream %x, read %d of %v:\nlibrary %s\nframed  %s", stream, i, script, want, got)
		}
	}
}

// frameOf is the frame of body: its length, then body.
func frameOf(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// FuzzFramedTransportReads reads the fuzzer's streams with the fuzzer's
// reads (a byte each) through FramedTransport and through the library.
// Values cut by the end of a frame continue in the next, as the library
// reads them; frames over the limit and cut frames fail as there.
func FuzzFramedTransportReads(f *testing.F) {
	field := []byte{0x0b, 0x00, 0x01, 0, 0, 0, 3, 'a', 'b', 'c', 0}
	f.Add(append(frameOf(field), frameOf(field)...), []byte{0, 10, 0, 0, 10, 0})
	f.Add(append(frameOf(nil), frameOf([]byte{0, 0, 0, 2, 'h', 'i'})...), []byte{10, 10})
	f.Add(append(frameOf([]byte{0, 0, 0, 4, 'a'}), frameOf([]byte{'b', 'c', 'd'})...), []byte{10, 9})
	f.Add(append(frameOf([]byte{0x0f, 0x0b}), frameOf([]byte{0, 0, 0, 2})...), []byte{2, 2})
	f.Add(binary.BigEndian.AppendUint32(nil, 257), []byte{6})
	f.Add(append(binary.BigEndian.AppendUint32(nil, 8), 1, 2, 3), []byte{7, 7})
	f.Fuzz(func(t *testing.T, stream, reads []byte) {
		script := make([]int, 0, 16)
		for _, r := range reads[:min(len(reads), 16)] {
			script = append(script, int(r)%len(readSteps))
		}
		readStreamLikeTheLibrary(t, stream, script)
	})
}

// TestFramedTransportOverTCP sends calls over a loopback connection, one
// frame larger than the buffer kept between frames, and reads them back.
func TestFramedTransportOverTCP(t *testing.T) {
	ctx := t.Context()
	conf := &thrift.TConfiguration{MaxFrameSize: 4 << 20, MaxMessageSize: 4 << 20}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	values := [][]byte{[]byte("small"), bytes.Repeat([]byte{9}, 2<<20), []byte("small again")}
	sent := make(chan error, 1)
	go func() {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			sent <- err
			return
		}
		defer conn.Close()
		p := NewFactory(conf).GetProtocol(NewFramedTransport(thrift.NewTSocketFromConnConf(conn, conf), conf, 4096))
		for seq, v := range values {
			if err := writeMessage(ctx, p, int32(seq), v); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tr := NewFramedTransport(thrift.NewTSocketFromConnConf(conn, conf), conf, 4096)
	p := NewFactory(conf).GetProtocol(tr)
	for seq, want := range values {
		name, _, gotSeq, err := p.ReadMessageBegin(ctx)
		if err != nil || name != "get_slice" || gotSeq != int32(seq) {
			t.Fatalf("message %d: %q seq %d, %v", seq, name, gotSeq, err)
		}
		var got []byte
		for {
			_, typ, id, err := p.ReadFieldBegin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if typ == thrift.STOP {
				break
			}
			if id == 3 {
				if got, err = p.ReadBinary(ctx); err != nil {
					t.Fatal(err)
				}
			} else if err := p.Skip(ctx, typ); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.ReadMessageEnd(ctx); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("message %d: value of %d bytes, want %d", seq, len(got), len(want))
		}
	}
	if c := cap(tr.Buf); c > keptFrameBuffer {
		t.Errorf("the buffer of a %d-byte frame was kept for a small one (%d bytes)", len(values[1]), c)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}
