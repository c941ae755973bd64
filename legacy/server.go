package legacy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// ErrServerClosed is what Serve returns once Shutdown has been called.
var ErrServerClosed = errors.New("thrift server closed")

// The generated processor checks thrift.ServerConnectivityCheckInterval on
// every request: when it is positive (5ms by default) it starts, for that
// request, a goroutine with a ticker that polls the transport's IsOpen and
// cancels the handler's context if the client went away. That costs a
// goroutine, a timer and two contexts per request, and it would detect
// nothing here: the server reads a whole frame before processing it and
// its transport does not probe the socket. Handlers' contexts are
// cancelled instead when the server is stopped abruptly. The setting is a
// variable of the Thrift library, so it is set once, here, for the process.
func init() {
	thrift.ServerConnectivityCheckInterval = 0
}

// Accept back-off after a temporary error (out of file descriptors, say).
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = time.Second
)

// Frame size limits, in MiB.
const (
	// DefaultMaxFrameMB is Cassandra's thrift_framed_transport_size_in_mb.
	DefaultMaxFrameMB = 15
	// MaxFrameMBLimit keeps frame lengths within the protocol's int32.
	MaxFrameMBLimit = 2047
)

// ServerConfig is what the network server needs to know. thriftd's whole
// configuration (store, commit log, what the API reports) is
// daemon.Config.
type ServerConfig struct {
	// Listen is the host:port to listen on (port 0: any free port).
	Listen string
	// MaxFrameMB is the largest Thrift frame accepted, in MiB; <= 0: the
	// default, above MaxFrameMBLimit: the limit.
	MaxFrameMB int
	// TLS, when set, makes every connection a TLS server connection with
	// this configuration (Cassandra's client_encryption_options): the
	// handshake must complete within HandshakeTimeout, and a client that
	// fails it (a plaintext client, a missing or untrusted client
	// certificate when ClientAuth requires one) is disconnected and logged.
	TLS *tls.Config
	// HandshakeTimeout bounds a TLS handshake; <= 0: DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxConnections is how many connections are served at once; one
	// beyond is closed at once, and logged. <= 0: no limit.
	MaxConnections int
	// IdleTimeout is how long a connection may take to send a whole
	// request frame, waiting included, and to take a reply: a client that
	// sends nothing, or part of a frame, or reads no reply for that long
	// is disconnected. <= 0: no limit.
	IdleTimeout time.Duration
	// RequestTimeouts are the deadlines of the calls.
	RequestTimeouts RequestTimeouts
	// Observer, when set, is told of every call, connection and frame,
	// for metrics (see metrics.go).
	Observer Observer
}

// DefaultHandshakeTimeout bounds a TLS handshake when ServerConfig sets no
// limit.
const DefaultHandshakeTimeout = 10 * time.Second

// Server serves the Thrift API: framed transport, binary protocol, one
// goroutine and one Session per connection.
type Server struct {
	cfg        ServerConfig
	frameLimit uint32
	protocol   *thrift.TConfiguration
	// processor is the generated dispatcher; it holds no per-request state
	// and serves every connection.
	processor thrift.TProcessor
	logger    *slog.Logger

	// closing is set when Shutdown begins or Serve's context ends; it is
	// read on every request without taking mu.
	closing atomic.Bool

	mu       sync.Mutex
	listener net.Listener
	serving  bool
	conns    map[*serverConn]struct{}
	lastID   uint64
	// refused counts the connections refused since lastRefusalLog.
	refused        int
	lastRefusalLog time.Time
	// cancelRequests cancels the context of every connection.
	cancelRequests context.CancelFunc
	// connsDone counts running connection goroutines; Add happens under mu
	// while closing is false.
	connsDone sync.WaitGroup
}

// NewServer returns a server answering with handler.
func NewServer(cfg ServerConfig, handler cassandra.Cassandra, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.MaxFrameMB <= 0 {
		cfg.MaxFrameMB = DefaultMaxFrameMB
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	limit := frameLimitBytes(cfg.MaxFrameMB)
	s := &Server{
		cfg:        cfg,
		frameLimit: limit,
		protocol: &thrift.TConfiguration{
			MaxMessageSize: int32(limit),
			MaxFrameSize:   int32(limit),
			// Old clients send messages without the version word.
			TBinaryStrictRead:  thrift.BoolPtr(false),
			TBinaryStrictWrite: thrift.BoolPtr(true),
		},
		logger: logger,
		conns:  make(map[*serverConn]struct{}),
	}
	served := withConsistencyLevels(handler)
	processor := cassandra.NewCassandraProcessor(served)
	processor.AddToProcessorMap("batch_mutate", newBatchMutateProcessor(served, false))
	processor.AddToProcessorMap("atomic_batch_mutate", newBatchMutateProcessor(served, true))
	for name, fn := range readProcessors(served) {
		processor.AddToProcessorMap(name, fn)
	}
	for name, fn := range writeProcessors(served) {
		processor.AddToProcessorMap(name, fn)
	}
	s.processor = thrift.WrapProcessor(processor, s.middleware)
	return s
}

// frameLimitBytes converts the frame limit to bytes, capped so that it
// fits the int32 lengths of the protocol.
func frameLimitBytes(mb int) uint32 {
	if mb > MaxFrameMBLimit {
		mb = MaxFrameMBLimit
	}
	return uint32(mb) << 20
}

// Listen opens the listening socket on cfg.Listen. Serve calls it if it was
// not called before; tests call it first to learn the port of ":0".
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return ErrServerClosed
	}
	if s.listener != nil {
		return fmt.Errorf("thrift server already listening on %s", s.listener.Addr())
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("thrift server: listen on %s: %w", s.cfg.Listen, err)
	}
	s.listener = ln
	s.logger.Info("thrift server listening", "addr", ln.Addr().String(), "max_frame_bytes", s.frameLimit,
		"tls", s.cfg.TLS != nil, "client_auth", s.clientAuth())
	return nil
}

// clientAuth describes the client-certificate policy, for the log.
func (s *Server) clientAuth() string {
	if s.cfg.TLS == nil {
		return "none"
	}
	return s.cfg.TLS.ClientAuth.String()
}

// Addr is the listening address, or nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr()
}

// Serve accepts and serves connections until Shutdown is called, and then
// returns ErrServerClosed. ctx is the parent of every request's context; if
// it ends first, the server stops at once as with an expired Shutdown (the
// listener and every connection are closed, handlers' contexts cancelled)
// and Serve returns ctx's error. For a graceful stop, call Shutdown.
func (s *Server) Serve(ctx context.Context) error {
	if s.Addr() == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	requestCtx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if s.serving || s.closing.Load() {
		s.mu.Unlock()
		cancel()
		if s.serving {
			return errors.New("thrift server: Serve called twice")
		}
		return ErrServerClosed
	}
	s.serving = true
	s.cancelRequests = cancel
	ln := s.listener
	s.mu.Unlock()

	stop := context.AfterFunc(ctx, s.closeNow)
	defer stop()

	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				if ctx.Err() != nil {
					return fmt.Errorf("thrift server stopped: %w", context.Cause(ctx))
				}
				return ErrServerClosed
			}
			if !isTemporaryAcceptError(err) {
				return fmt.Errorf("thrift server: accept on %s: %w", ln.Addr(), err)
			}
			delay = min(max(2*delay, minAcceptDelay), maxAcceptDelay)
			s.logger.WarnContext(ctx, "thrift server: accept failed; retrying", "err", err, "delay", delay)
			select {
			case <-time.After(delay):
			case <-ctx.Done():
			}
			continue
		}
		delay = 0
		s.startConn(requestCtx, nc)
	}
}

// isTemporaryAcceptError reports whether accepting may succeed later.
func isTemporaryAcceptError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// startConn registers a connection and serves it on its own goroutine.
func (s *Server) startConn(ctx context.Context, nc net.Conn) {
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		_ = nc.Close()
		if s.cfg.Observer != nil {
			s.cfg.Observer.ConnectionRefused(RefusedShuttingDown)
		}
		return
	}
	if !s.admit() {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.lastID++
	if s.cfg.TLS != nil {
		nc = tls.Server(nc, s.cfg.TLS)
	}
	c := newServerConn(s, nc, s.lastID)
	s.conns[c] = struct{}{}
	s.connsDone.Add(1)
	s.mu.Unlock()
	if s.cfg.Observer != nil {
		s.cfg.Observer.ConnectionOpened()
	}

	go func() {
		defer s.connsDone.Done()
		defer s.forget(c)
		c.serve(ctx)
	}()
}

func (s *Server) forget(c *serverConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	if s.cfg.Observer != nil {
		s.cfg.Observer.ConnectionClosed()
	}
}

// Shutdown stops the server gracefully: it stops accepting, lets the calls
// in flight finish and their replies be written, and closes connections as
// they become idle. If ctx ends first, it closes every connection at once,
// cancels the handlers' contexts and returns ctx's error without waiting
// for handlers that ignore their context.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginClose()
	drained := make(chan struct{})
	go func() {
		s.connsDone.Wait()
		close(drained)
	}()
	select {
	case <-drained:
		s.mu.Lock()
		if s.cancelRequests != nil {
			s.cancelRequests()
		}
		s.mu.Unlock()
		s.logger.InfoContext(ctx, "thrift server stopped")
		return nil
	case <-ctx.Done():
		s.closeNow()
		s.logger.WarnContext(ctx, "thrift server: shutdown deadline passed; connections closed", "err", ctx.Err())
		return fmt.Errorf("thrift server: shutdown: %w", ctx.Err())
	}
}

// beginClose stops accepting and closes the idle connections; busy ones
// close themselves when their reply is written.
func (s *Server) beginClose() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing.Store(true)
	if s.listener != nil {
		_ = s.listener.Close()
	}
	for c := range s.conns {
		c.closeIfIdle()
	}
}

// closeNow closes the listener and every connection and cancels the
// handlers' contexts.
func (s *Server) closeNow() {
	s.beginClose()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.closeNow()
	}
	if s.cancelRequests != nil {
		s.cancelRequests()
	}
}
