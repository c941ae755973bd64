package legacy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// wireTestTimeout bounds every network wait of these tests.
const wireTestTimeout = 10 * time.Second

// serverLogBuffer collects a server's log lines for assertions.
type serverLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *serverLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *serverLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type wireTestServer struct {
	*Server
	addr   string
	logs   *serverLogBuffer
	served chan error // Serve's result
}

// startWireTestServer serves handler on 127.0.0.1:0; the server is shut down
// when the test ends unless the test did it.
func startWireTestServer(t *testing.T, handler cassandra.Cassandra, configure ...func(*ServerConfig)) *wireTestServer {
	t.Helper()
	cfg := ServerConfig{Listen: "127.0.0.1:0"}
	for _, f := range configure {
		f(&cfg)
	}
	logs := &serverLogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := NewServer(cfg, handler, logger)
	if err := srv.Listen(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ts := &wireTestServer{Server: srv, addr: srv.Addr().String(), logs: logs, served: make(chan error, 1)}
	go func() { ts.served <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wireTestTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
		select {
		case <-ts.served:
		case <-ctx.Done():
			t.Errorf("Serve did not return after Shutdown")
		}
	})
	return ts
}

// waitServed waits for Serve's result.
func (ts *wireTestServer) waitServed(t *testing.T) error {
	t.Helper()
	select {
	case err := <-ts.served:
		ts.served <- err // for the cleanup
		return err
	case <-time.After(wireTestTimeout):
		t.Fatal("Serve did not return")
		return nil
	}
}

type wireTestClient struct {
	*cassandra.CassandraClient
	transport thrift.TTransport
}

// dialWireClient connects a generated client; strictWrite false makes it send
// messages without the version word, as old clients do.
func dialWireClient(t *testing.T, addr string, strictWrite bool) *wireTestClient {
	t.Helper()
	conf := &thrift.TConfiguration{
		ConnectTimeout:     wireTestTimeout,
		SocketTimeout:      wireTestTimeout,
		TBinaryStrictWrite: thrift.BoolPtr(strictWrite),
	}
	transport := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(addr, conf), conf)
	if err := transport.Open(); err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = transport.Close() })
	protocol := thrift.NewTBinaryProtocolConf(transport, conf)
	return &wireTestClient{
		CassandraClient: cassandra.NewCassandraClient(thrift.NewTStandardClient(protocol, protocol)),
		transport:       transport,
	}
}

func wireTestContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), wireTestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// waitForCondition polls cond until it holds or the test times out.
func waitForCondition(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wireTestTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionEchoHandler exposes the session through the API: set_keyspace stores
// the keyspace, describe_version returns it, login records the user,
// describe_cluster_name returns it.
type sessionEchoHandler struct{ Unsupported }

func (sessionEchoHandler) Login(ctx context.Context, auth *cassandra.AuthenticationRequest) error {
	SessionFrom(ctx).Login(auth.Credentials["username"])
	return nil
}

func (sessionEchoHandler) SetKeyspace(ctx context.Context, keyspace string) error {
	SessionFrom(ctx).SetKeyspace(keyspace)
	return nil
}

func (sessionEchoHandler) DescribeVersion(ctx context.Context) (string, error) {
	return SessionFrom(ctx).Keyspace(), nil
}

func (sessionEchoHandler) DescribeClusterName(ctx context.Context) (string, error) {
	return SessionFrom(ctx).User(), nil
}

func TestSessionPerConnection(t *testing.T) {
	ts := startWireTestServer(t, sessionEchoHandler{})
	ctx := wireTestContext(t)
	a := dialWireClient(t, ts.addr, true)
	b := dialWireClient(t, ts.addr, false)
	if err := a.SetKeyspace(ctx, "ks_a"); err != nil {
		t.Fatalf("set_keyspace on a: %v", err)
	}
	if err := b.SetKeyspace(ctx, "ks_b"); err != nil {
		t.Fatalf("set_keyspace on b: %v", err)
	}
	if err := a.Login(ctx, &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": "alice", "password": "x"}}); err != nil {
		t.Fatalf("login on a: %v", err)
	}
	for range 3 {
		if ks, err := a.DescribeVersion(ctx); err != nil || ks != "ks_a" {
			t.Fatalf("connection a sees keyspace %q, %v; want ks_a", ks, err)
		}
		if ks, err := b.DescribeVersion(ctx); err != nil || ks != "ks_b" {
			t.Fatalf("connection b sees keyspace %q, %v; want ks_b", ks, err)
		}
	}
	if user, err := a.DescribeClusterName(ctx); err != nil || user != "alice" {
		t.Errorf("connection a: user %q, %v; want alice", user, err)
	}
	if user, err := b.DescribeClusterName(ctx); err != nil || user != "" {
		t.Errorf("connection b: user %q, %v; want none", user, err)
	}
	c := dialWireClient(t, ts.addr, true)
	if ks, err := c.DescribeVersion(ctx); err != nil || ks != "" {
		t.Errorf("a new connection sees keyspace %q, %v; want none", ks, err)
	}
}

func TestManyConcurrentClients(t *testing.T) {
	ts := startWireTestServer(t, sessionEchoHandler{})
	ctx := wireTestContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		client := dialWireClient(t, ts.addr, i%2 == 0)
		keyspace := "ks" + strings.Repeat("x", i)
		wg.Go(func() {
			if err := client.SetKeyspace(ctx, keyspace); err != nil {
				errs <- err
				return
			}
			for range 50 {
				if got, err := client.DescribeVersion(ctx); err != nil || got != keyspace {
					errs <- errors.Join(err, errors.New("wrong keyspace "+got))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// rawFramedConn speaks the framed binary protocol by hand.
type rawFramedConn struct {
	t    *testing.T
	conn net.Conn
}

func dialRawFramed(t *testing.T, addr string) *rawFramedConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wireTestTimeout)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(wireTestTimeout)); err != nil {
		t.Fatal(err)
	}
	return &rawFramedConn{t: t, conn: conn}
}

// encodeEmptyCall encodes a call with an empty argument struct.
func encodeEmptyCall(t *testing.T, name string, seqID int32, strict bool) []byte {
	t.Helper()
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{TBinaryStrictWrite: thrift.BoolPtr(strict)})
	if err := p.WriteMessageBegin(ctx, name, thrift.CALL, seqID); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteStructBegin(ctx, "args"); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteFieldStop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteStructEnd(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteMessageEnd(ctx); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (r *rawFramedConn) sendFrame(payload []byte) {
	r.t.Helper()
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	if _, err := r.conn.Write(append(frame, payload...)); err != nil {
		r.t.Fatalf("write frame: %v", err)
	}
}

// readReply reads one reply frame and returns its message header and, for
// an exception, the TApplicationException.
func (r *rawFramedConn) readReply() (name string, typeID thrift.TMessageType, seqID int32, exc thrift.TApplicationException) {
	r.t.Helper()
	var header [4]byte
	if _, err := io.ReadFull(r.conn, header[:]); err != nil {
		r.t.Fatalf("read reply header: %v", err)
	}
	payload := make([]byte, binary.BigEndian.Uint32(header[:]))
	if _, err := io.ReadFull(r.conn, payload); err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	buf.Write(payload)
	p := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})
	name, typeID, seqID, err := p.ReadMessageBegin(ctx)
	if err != nil {
		r.t.Fatalf("read reply message: %v", err)
	}
	if typeID == thrift.EXCEPTION {
		exc = thrift.NewTApplicationException(0, "")
		if err := exc.Read(ctx, p); err != nil {
			r.t.Fatalf("read exception: %v", err)
		}
	}
	return name, typeID, seqID, exc
}

// expectClosed checks that the server closes the connection without a reply.
func (r *rawFramedConn) expectClosed() {
	r.t.Helper()
	var b [1]byte
	n, err := r.conn.Read(b[:])
	var ne net.Error
	if n > 0 || err == nil || errors.As(err, &ne) && ne.Timeout() {
		r.t.Fatalf("connection still open: read %d bytes, %v", n, err)
	}
}

func TestStrictAndNonStrictMessages(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{})
	r := dialRawFramed(t, ts.addr)
	for i, strict := range []bool{true, false, true} {
		r.sendFrame(encodeEmptyCall(t, "describe_version", int32(10+i), strict))
		name, typeID, seqID, _ := r.readReply()
		if name != "describe_version" || typeID != thrift.REPLY || seqID != int32(10+i) {
			t.Fatalf("strict=%v: reply %s type %d seq %d", strict, name, typeID, seqID)
		}
	}
}

func TestUnknownMethodKeepsConnection(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{})
	r := dialRawFramed(t, ts.addr)
	r.sendFrame(encodeEmptyCall(t, "no_such_method", 7, true))
	name, typeID, seqID, exc := r.readReply()
	if name != "no_such_method" || typeID != thrift.EXCEPTION || seqID != 7 || exc.TypeId() != thrift.UNKNOWN_METHOD {
		t.Fatalf("reply %s type %d seq %d exception %v", name, typeID, seqID, exc)
	}
	r.sendFrame(encodeEmptyCall(t, "describe_version", 8, true))
	if name, typeID, _, _ := r.readReply(); name != "describe_version" || typeID != thrift.REPLY {
		t.Fatalf("after an unknown method: reply %s type %d", name, typeID)
	}
}

func TestMissingRequiredArgumentKeepsConnection(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{})
	r := dialRawFramed(t, ts.addr)
	// set_keyspace without its required keyspace argument.
	r.sendFrame(encodeEmptyCall(t, "set_keyspace", 3, true))
	if _, typeID, _, exc := r.readReply(); typeID != thrift.EXCEPTION || exc.TypeId() != thrift.PROTOCOL_ERROR {
		t.Fatalf("reply type %d exception %v; want a protocol error", typeID, exc)
	}
	r.sendFrame(encodeEmptyCall(t, "describe_version", 4, true))
	if name, typeID, _, _ := r.readReply(); name != "describe_version" || typeID != thrift.REPLY {
		t.Fatalf("after a refused request: reply %s type %d", name, typeID)
	}
}

func TestUnreadableMessageClosesConnection(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{})
	r := dialRawFramed(t, ts.addr)
	// A strict header with version 2: no reply can be addressed.
	r.sendFrame([]byte{0x80, 0x02, 0x00, 0x01, 0, 0, 0, 0})
	r.expectClosed()
	// The server is still healthy.
	if _, err := dialWireClient(t, ts.addr, true).DescribeVersion(wireTestContext(t)); err != nil {
		t.Fatalf("describe_version after a bad message: %v", err)
	}
}

func TestOversizedFrameClosesOnlyThatConnection(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{}, func(c *ServerConfig) { c.MaxFrameMB = 1 })
	ctx := wireTestContext(t)
	other := dialWireClient(t, ts.addr, true)
	if _, err := other.DescribeVersion(ctx); err != nil {
		t.Fatal(err)
	}

	// A frame exactly at the limit is accepted (the padding after the
	// message is ignored).
	atLimit := dialRawFramed(t, ts.addr)
	msg := encodeEmptyCall(t, "describe_version", 1, true)
	atLimit.sendFrame(append(msg, make([]byte, 1<<20-len(msg))...))
	if name, typeID, _, _ := atLimit.readReply(); name != "describe_version" || typeID != thrift.REPLY {
		t.Fatalf("frame at the limit: reply %s type %d", name, typeID)
	}

	// One byte more closes the connection, before the body is sent.
	over := dialRawFramed(t, ts.addr)
	if _, err := over.conn.Write(binary.BigEndian.AppendUint32(nil, 1<<20+1)); err != nil {
		t.Fatal(err)
	}
	over.expectClosed()

	// The generated client sending too much gets an error too.
	big := dialWireClient(t, ts.addr, true)
	value := make([]byte, 2<<20)
	err := big.Insert(ctx, []byte("k"), &cassandra.ColumnParent{ColumnFamily: "cf"},
		&cassandra.Column{Name: []byte("c"), Value: value, Timestamp: thrift.Int64Ptr(1)}, cassandra.ConsistencyLevel_ONE)
	if err == nil {
		t.Fatal("an insert larger than the frame limit succeeded")
	}

	waitForCondition(t, "the oversized-frame warning", func() bool {
		return strings.Count(ts.logs.String(), "thrift frame too large") >= 2
	})
	if !strings.Contains(ts.logs.String(), "level=WARN") {
		t.Errorf("the oversized frame was not logged as a warning:\n%s", ts.logs)
	}
	if _, err := other.DescribeVersion(ctx); err != nil {
		t.Fatalf("the other connection broke: %v", err)
	}
	if _, err := dialWireClient(t, ts.addr, true).DescribeVersion(ctx); err != nil {
		t.Fatalf("a new connection failed: %v", err)
	}
}

func TestUnframedClientIsExplained(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{})
	r := dialRawFramed(t, ts.addr)
	if _, err := r.conn.Write(encodeEmptyCall(t, "describe_version", 1, true)); err != nil {
		t.Fatal(err)
	}
	r.expectClosed()
	waitForCondition(t, "the unframed-client hint", func() bool { return strings.Contains(ts.logs.String(), "framed transport") })
}

// panickingHandler panics in describe_keyspaces.
type panickingHandler struct{ Unsupported }

func (panickingHandler) DescribeKeyspaces(context.Context) ([]*cassandra.KsDef, error) {
	panic("boom")
}

func TestHandlerPanicIsAnswered(t *testing.T) {
	ts := startWireTestServer(t, panickingHandler{})
	ctx := wireTestContext(t)
	c := dialWireClient(t, ts.addr, true)
	_, err := c.DescribeKeyspaces(ctx)
	var tae thrift.TApplicationException
	if !errors.As(err, &tae) || tae.TypeId() != thrift.INTERNAL_ERROR || !strings.Contains(tae.Error(), "describe_keyspaces") {
		t.Fatalf("describe_keyspaces: %v; want an internal error naming the method", err)
	}
	if v, err := c.DescribeVersion(ctx); err != nil || v != cassandra.VERSION {
		t.Fatalf("the connection did not survive the panic: %q, %v", v, err)
	}
	if !strings.Contains(ts.logs.String(), "thrift handler panicked") {
		t.Errorf("the panic was not logged")
	}
}

// blockingVersionHandler blocks describe_version until released or cancelled.
type blockingVersionHandler struct {
	Unsupported
	entered   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
	once      sync.Once
}

func newBlockingVersionHandler() *blockingVersionHandler {
	return &blockingVersionHandler{entered: make(chan struct{}), release: make(chan struct{}), cancelled: make(chan struct{})}
}

func (h *blockingVersionHandler) DescribeVersion(ctx context.Context) (string, error) {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-h.release:
		return "finished", nil
	case <-ctx.Done():
		close(h.cancelled)
		return "", ctx.Err()
	}
}

type blockedCallResult struct {
	value string
	err   error
}

// startBlockedCall starts describe_version on a new connection and waits
// until the handler holds it.
func startBlockedCall(t *testing.T, ts *wireTestServer, h *blockingVersionHandler) <-chan blockedCallResult {
	t.Helper()
	client := dialWireClient(t, ts.addr, true)
	ctx := wireTestContext(t)
	result := make(chan blockedCallResult, 1)
	go func() {
		v, err := client.DescribeVersion(ctx)
		result <- blockedCallResult{v, err}
	}()
	select {
	case <-h.entered:
	case <-time.After(wireTestTimeout):
		t.Fatal("the call did not reach the handler")
	}
	return result
}

func refusesConnections(addr string) func() bool {
	return func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		_ = conn.Close()
		return false
	}
}

func TestGracefulShutdown(t *testing.T) {
	h := newBlockingVersionHandler()
	ts := startWireTestServer(t, h)
	ctx := wireTestContext(t)
	// An idle connection that never sends again must be closed by the
	// server, or Shutdown would wait for it forever.
	idle := dialRawFramed(t, ts.addr)
	idle.sendFrame(encodeEmptyCall(t, "describe_cluster_name", 1, true))
	idle.readReply()
	// An idle connection whose next request comes during the shutdown.
	late := dialWireClient(t, ts.addr, true)
	if _, err := late.DescribeClusterName(ctx); err != nil {
		t.Fatal(err)
	}
	inFlight := startBlockedCall(t, ts, h)

	shutdown := make(chan error, 1)
	go func() { shutdown <- ts.Shutdown(ctx) }()

	waitForCondition(t, "new connections to be refused", refusesConnections(ts.addr))
	idle.expectClosed()
	if _, err := late.DescribeClusterName(ctx); err == nil {
		t.Error("an idle connection still answers during shutdown")
	}
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) while a call was in flight", err)
	default:
	}

	close(h.release)
	select {
	case res := <-inFlight:
		if res.err != nil || res.value != "finished" {
			t.Fatalf("in-flight call: %q, %v; want its reply", res.value, res.err)
		}
	case <-time.After(wireTestTimeout):
		t.Fatal("the in-flight call got no reply")
	}
	select {
	case err := <-shutdown:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(wireTestTimeout):
		t.Fatal("Shutdown did not return after the last call finished")
	}
	if err := ts.waitServed(t); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	select {
	case <-h.cancelled:
		t.Error("a graceful shutdown cancelled the handler's context")
	default:
	}
}

func TestShutdownWithExpiredContextForceCloses(t *testing.T) {
	h := newBlockingVersionHandler()
	ts := startWireTestServer(t, h)
	inFlight := startBlockedCall(t, ts, h)

	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	start := time.Now()
	err := ts.Shutdown(expired)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown with an expired context: %v, want a deadline error", err)
	}
	if elapsed := time.Since(start); elapsed > wireTestTimeout/2 {
		t.Errorf("Shutdown took %v", elapsed)
	}
	select {
	case res := <-inFlight:
		if res.err == nil {
			t.Fatalf("the in-flight call got a reply (%q) after a forced shutdown", res.value)
		}
	case <-time.After(wireTestTimeout):
		t.Fatal("the in-flight call was not cut off")
	}
	select {
	case <-h.cancelled:
	case <-time.After(wireTestTimeout):
		t.Fatal("the handler's context was not cancelled")
	}
	if !refusesConnections(ts.addr)() {
		t.Error("the server still accepts connections")
	}
	if err := ts.waitServed(t); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
}

func TestServeContextCancelStopsServer(t *testing.T) {
	h := newBlockingVersionHandler()
	cfg := ServerConfig{Listen: "127.0.0.1:0"}
	srv := NewServer(cfg, h, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	ts := &wireTestServer{Server: srv, addr: srv.Addr().String()}
	inFlight := startBlockedCall(t, ts, h)
	cancel()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve returned %v, want context.Canceled", err)
		}
	case <-time.After(wireTestTimeout):
		t.Fatal("Serve did not return")
	}
	select {
	case res := <-inFlight:
		if res.err == nil {
			t.Error("the in-flight call got a reply after the server stopped")
		}
	case <-time.After(wireTestTimeout):
		t.Fatal("the in-flight call was not cut off")
	}
	if err := srv.Shutdown(wireTestContext(t)); err != nil {
		t.Errorf("Shutdown after stop: %v", err)
	}
}

func TestServeAfterShutdown(t *testing.T) {
	cfg := ServerConfig{Listen: "127.0.0.1:0"}
	srv := NewServer(cfg, Unsupported{}, slog.New(slog.DiscardHandler))
	if err := srv.Shutdown(wireTestContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(context.Background()); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v", err)
	}
	if err := srv.Listen(); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Listen after Shutdown: %v", err)
	}
}

func TestListenError(t *testing.T) {
	cfg := ServerConfig{Listen: "127.0.0.1:notaport"}
	err := NewServer(cfg, Unsupported{}, nil).Listen()
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:notaport") {
		t.Errorf("Listen on a bad address: %v", err)
	}
}
