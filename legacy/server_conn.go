package legacy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// States of a connection, for graceful shutdown.
const (
	connIdle   int32 = iota // waiting for the next request
	connBusy                // reading, processing or answering a request
	connClosed              // closed by the server
)

// serverConn is one client connection: its transport, protocol and
// session, all reused for every request.
type serverConn struct {
	server  *Server
	netConn net.Conn
	frames  *frameTransport
	in      messageRecorder
	out     *slabprotocol.AppendProtocol
	session *Session
	log     *slog.Logger
	state   atomic.Int32
}

// requestFieldChunks is how the binary fields of a request (row keys,
// names, values) are handed out: pieces of 8 KiB chunks, and an
// allocation of its own for a field of 1 KiB or more.
var requestFieldChunks = slabprotocol.Chunks{Size: 8 << 10, Own: 1 << 10}

func newServerConn(s *Server, nc net.Conn, id uint64) *serverConn {
	frames := newFrameTransport(nc, s.frameLimit)
	frames.writeTimeout = s.cfg.IdleTimeout
	frames.observer = s.cfg.Observer
	protocol := thrift.NewTBinaryProtocolConf(frames, s.protocol)
	return &serverConn{
		server:  s,
		netConn: nc,
		frames:  frames,
		in:      messageRecorder{TProtocol: slabprotocol.NewFrameProtocol(protocol, &frames.Frame, s.protocol, requestFieldChunks)},
		out:     slabprotocol.NewAppendProtocol(protocol, &frames.OutFrame),
		session: NewSession(id, nc.RemoteAddr()),
		log:     s.logger.With("conn", id, "remote", nc.RemoteAddr().String()),
	}
}

// serve answers requests until the client leaves, the connection breaks or
// the server stops.
func (c *serverConn) serve(ctx context.Context) {
	defer c.netConn.Close()
	// The connection's own context, which ends with it: the calls'
	// deadline clock hooks on it once rather than on the server's.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = withLocalAddr(WithSession(ctx, c.session), c.netConn.LocalAddr())
	c.session.calls = newCallClock(ctx)
	c.log.DebugContext(ctx, "thrift connection opened")
	if !c.handshake(ctx) {
		return
	}
	for {
		if idle := c.server.cfg.IdleTimeout; idle > 0 {
			_ = c.netConn.SetReadDeadline(time.Now().Add(idle))
		}
		if err := c.frames.readFrame(); err != nil {
			c.logReadError(ctx, err)
			return
		}
		if !c.beginRequest() {
			return
		}
		keepOpen := c.process(ctx)
		c.frames.endRequest()
		if !c.endRequest() || !keepOpen {
			c.log.DebugContext(ctx, "thrift connection closed by the server")
			return
		}
	}
}

// handshake completes the TLS handshake of a TLS connection within the
// server's handshake timeout, and reports whether the connection can go
// on. A failure (a plaintext client, a refused client certificate) is the
// client's: it is logged, and the connection is closed.
func (c *serverConn) handshake(ctx context.Context) bool {
	tc, ok := c.netConn.(*tls.Conn)
	if !ok {
		return true
	}
	hctx, cancel := context.WithTimeout(ctx, c.server.cfg.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		if c.state.Load() == connClosed || errors.Is(err, net.ErrClosed) {
			c.log.DebugContext(ctx, "thrift connection closed by the server during the TLS handshake")
			return false
		}
		c.log.WarnContext(ctx, "TLS handshake failed; closing connection", "err", err)
		if c.server.cfg.Observer != nil {
			c.server.cfg.Observer.ConnectionRefused(RefusedTLSHandshake)
		}
		return false
	}
	st := tc.ConnectionState()
	attrs := []any{"tls_version", tls.VersionName(st.Version), "cipher", tls.CipherSuiteName(st.CipherSuite)}
	if len(st.PeerCertificates) > 0 {
		attrs = append(attrs, "client_cert", st.PeerCertificates[0].Subject.String())
	}
	c.log.DebugContext(ctx, "TLS handshake done", attrs...)
	return true
}

// beginRequest marks the connection busy, unless the server is closing.
func (c *serverConn) beginRequest() bool {
	if !c.state.CompareAndSwap(connIdle, connBusy) {
		return false
	}
	if c.server.closing.Load() {
		c.state.Store(connClosed)
		return false
	}
	return true
}

// endRequest marks the connection idle and reports whether it may wait for
// another request. The store and the load pair with closeIfIdle's: either
// the shutdown sees the connection idle and closes it, or the connection
// sees the shutdown.
func (c *serverConn) endRequest() bool {
	c.state.Store(connIdle)
	return !c.server.closing.Load()
}

// closeIfIdle closes the connection if no request is in progress.
func (c *serverConn) closeIfIdle() {
	if c.state.CompareAndSwap(connIdle, connClosed) {
		_ = c.netConn.Close()
	}
}

// closeNow closes the connection whatever it is doing.
func (c *serverConn) closeNow() {
	c.state.Store(connClosed)
	_ = c.netConn.Close()
}

// process answers the request in the current frame and reports whether the
// connection can go on.
func (c *serverConn) process(ctx context.Context) (keepOpen bool) {
	c.in.reset()
	c.frames.flushes = 0
	defer func() {
		if r := recover(); r != nil {
			keepOpen = c.answerPanic(ctx, r)
		}
	}()
	ok, err := c.server.processor.Process(ctx, &c.in, c.out)
	switch {
	case c.frames.writeErr != nil:
		c.log.DebugContext(ctx, "thrift reply not delivered", "method", c.in.name, "err", c.frames.writeErr)
		return false
	case errors.Is(err, thrift.ErrAbandonRequest):
		return false
	case ok:
		if err != nil && !isDeclaredException(err) {
			c.log.ErrorContext(ctx, "thrift handler failed; answered an internal error", "method", c.in.name, "err", err)
		}
		return true
	case c.frames.flushes > 0:
		// Unreadable arguments or an unknown method: the client got an
		// exception and the next frame starts a new message.
		c.log.DebugContext(ctx, "thrift request refused", "method", c.in.name, "err", err)
		c.server.observeUnknownMethod(c.in.name)
		return true
	default:
		// No reply could be made (unreadable message header): closing
		// the connection is the only answer that does not leave the client
		// waiting.
		c.log.WarnContext(ctx, "unreadable thrift message; closing connection", "err", err)
		return false
	}
}

// answerPanic reports a handler panic to the client as an internal error,
// when the request is known and nothing was written yet, and logs it.
func (c *serverConn) answerPanic(ctx context.Context, r any) (keepOpen bool) {
	c.log.ErrorContext(ctx, "thrift handler panicked", "method", c.in.name, "panic", r, "stack", string(debug.Stack()))
	if !c.in.began || c.frames.flushes > 0 || c.frames.writeErr != nil {
		return false
	}
	c.frames.Discard(retainedBufferLimit)
	exc := thrift.NewTApplicationException(thrift.INTERNAL_ERROR, fmt.Sprintf("Internal error processing %s: %v", c.in.name, r))
	return writeMessage(ctx, c.out, c.in.name, thrift.EXCEPTION, c.in.seqID, exc) == nil
}

// writeMessage writes one reply message and flushes it; the first failure
// is the error.
func writeMessage(ctx context.Context, out thrift.TProtocol, name string, typ thrift.TMessageType, seqID int32, body interface {
	Write(context.Context, thrift.TProtocol) error
}) thrift.TException {
	err := out.WriteMessageBegin(ctx, name, typ, seqID)
	if err == nil {
		err = body.Write(ctx, out)
	}
	if err == nil {
		err = out.WriteMessageEnd(ctx)
	}
	if err == nil {
		err = out.Flush(ctx)
	}
	return thrift.WrapTException(err)
}

// logReadError logs why waiting for a request ended.
func (c *serverConn) logReadError(ctx context.Context, err error) {
	var tooLarge *frameTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		c.log.WarnContext(ctx, "thrift frame too large; closing connection",
			"frame_bytes", tooLarge.size, "max_frame_bytes", tooLarge.limit, "err", err)
	case errors.Is(err, io.EOF):
		c.log.DebugContext(ctx, "thrift connection closed by the client")
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.log.InfoContext(ctx, "thrift client idle past the idle timeout (client_idle_timeout_ms) without a whole request; closing connection",
			"idle_timeout", c.server.cfg.IdleTimeout, "err", err)
	case c.state.Load() == connClosed || errors.Is(err, net.ErrClosed):
		c.log.DebugContext(ctx, "thrift connection closed by the server")
	default:
		c.log.InfoContext(ctx, "thrift connection lost", "err", err)
	}
}

// isDeclaredException reports whether err is one of the exceptions the IDL
// declares, which the processor sends as a normal result.
func isDeclaredException(err error) bool {
	var (
		invalidRequest     *cassandra.InvalidRequestException
		notFound           *cassandra.NotFoundException
		unavailable        *cassandra.UnavailableException
		timedOut           *cassandra.TimedOutException
		authentication     *cassandra.AuthenticationException
		authorization      *cassandra.AuthorizationException
		schemaDisagreement *cassandra.SchemaDisagreementException
	)
	return errors.As(err, &invalidRequest) || errors.As(err, &notFound) || errors.As(err, &unavailable) ||
		errors.As(err, &timedOut) || errors.As(err, &authentication) || errors.As(err, &authorization) ||
		errors.As(err, &schemaDisagreement)
}

// messageRecorder remembers the name and sequence id of the message being
// read, so that a handler panic can still be answered.
type messageRecorder struct {
	thrift.TProtocol
	name  string
	seqID int32
	began bool
}

func (m *messageRecorder) reset() {
	m.name, m.seqID, m.began = "", 0, false
}

// ReadMessageBegin implements thrift.TProtocol.
func (m *messageRecorder) ReadMessageBegin(ctx context.Context) (string, thrift.TMessageType, int32, error) {
	name, typeID, seqID, err := m.TProtocol.ReadMessageBegin(ctx)
	m.name, m.seqID, m.began = name, seqID, err == nil
	return name, typeID, seqID, err
}
