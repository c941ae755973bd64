package legacy

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestReadingAFrameAllocatesNothing: a connection reads its requests'
// frames into the buffer it keeps, header and body alike; the header read
// into a local array used to escape, one allocation a call.
func TestReadingAFrameAllocatesNothing(t *testing.T) {
	srv, cli := socketPair(t)
	defer srv.Close()
	defer cli.Close()
	const runs = 100
	body := []byte("a request's bytes")
	var frames []byte
	for range runs + 1 { // AllocsPerRun runs once more to warm up
		frames = binary.BigEndian.AppendUint32(frames, uint32(len(body)))
		frames = append(frames, body...)
	}
	if _, err := cli.Write(frames); err != nil {
		t.Fatal(err)
	}
	ft := newFrameTransport(srv, 1<<20)
	allocs := testing.AllocsPerRun(runs, func() {
		if err := ft.readFrame(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ft.Buf[ft.Pos:], body) {
			t.Fatalf("frame read: %q, want %q", ft.Buf[ft.Pos:], body)
		}
		ft.endRequest()
	})
	if allocs != 0 {
		t.Errorf("reading a frame allocated %.1f times, want none", allocs)
	}
}
