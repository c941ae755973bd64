package thriftsource

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// ConnOptions says how to reach and log in to a server.
type ConnOptions struct {
	// Username and Password, when Username is set, are sent by login
	// (credentials {"username", "password"}, what PasswordAuthenticator
	// reads) before anything else on the connection.
	Username, Password string
	// TLS, when set, wraps the socket in TLS (Cassandra's
	// client_encryption_options, which 3.x applies to the Thrift port
	// too). Its ServerName defaults to the host of the address.
	TLS *tls.Config
	// Timeout bounds connecting and each call (default 60s).
	Timeout time.Duration
}

// ErrAuthentication is wrapped by the error of a login the server
// refused, and of a call the server refused for want of one.
var ErrAuthentication = errors.New("authentication failed")

// conn is one Thrift connection; calls are serialised, as a Thrift client
// is not safe for concurrent use.
type conn struct {
	mu        sync.Mutex
	transport thrift.TTransport
	client    *cassandra.CassandraClient
	// tls and clientCert say whether the connection is TLS, with a
	// client certificate.
	tls, clientCert bool
}

// pageReadBuffer is the socket read buffer of a connection.
const pageReadBuffer = 64 << 10

// dial opens a framed, binary-protocol connection to addr and logs in.
func dial(ctx context.Context, addr string, o ConnOptions) (*conn, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	cfg := &thrift.TConfiguration{
		ConnectTimeout: o.Timeout,
		SocketTimeout:  o.Timeout,
	}
	var sock thrift.TTransport
	if o.TLS != nil {
		tc := o.TLS.Clone()
		if tc.MinVersion == 0 {
			tc.MinVersion = tls.VersionTLS12
		}
		cfg.TLSConfig = tc
		sock = thrift.NewTSSLSocketConf(addr, cfg)
	} else {
		sock = thrift.NewTSocketConf(addr, cfg)
	}
	// Each page is read whole, then decoded from memory.
	transport := slabprotocol.NewFramedTransport(sock, cfg, pageReadBuffer)
	if err := transport.Open(); err != nil {
		return nil, fmt.Errorf("connect: %w", unwrapTransport(err))
	}
	client := cassandra.NewCassandraClientFactory(transport, slabprotocol.NewFactory(cfg))
	c := &conn{transport: transport, client: client, tls: o.TLS != nil}
	if o.TLS != nil {
		c.clientCert = len(o.TLS.Certificates) > 0 || o.TLS.GetClientCertificate != nil
	}
	if o.Username != "" {
		req := &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": o.Username, "password": o.Password}}
		if err := client.Login(ctx, req); err != nil {
			_ = transport.Close()
			return nil, fmt.Errorf("login as %s: %w", o.Username, c.explain(describeError(err)))
		}
	}
	return c, nil
}

// Call dials addr as o says (login, TLS, timeouts), runs fn with the
// connected client and closes the connection: for what a caller does over
// Thrift besides reading a Source, such as loading a fixture model
// (fixtures.Model.WriteThrift) or dropping a keyspace.
func Call(ctx context.Context, addr string, o ConnOptions, fn func(ctx context.Context, client *cassandra.CassandraClient) error) error {
	c, err := dial(ctx, addr, o)
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	defer c.close()
	return c.call(ctx, fn)
}

// explain adds a likely reason to the error of the first call on a TLS
// connection that the server closed. Under TLS 1.3 the client's side of
// the handshake ends before the server has checked the client's
// certificate: a server that refuses the certificate, or wants one,
// closes the connection, and the client learns it from its first call.
func (c *conn) explain(err error) error {
	if !c.tls || !(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return err
	}
	if !c.clientCert {
		return fmt.Errorf("%w (the server closed the TLS connection: does it require a client certificate?)", err)
	}
	return fmt.Errorf("%w (the server closed the TLS connection: does it accept this client certificate?)", err)
}

// unwrapTransport drops the layers of thrift.TTransportException around a
// network error, keeping its text.
func unwrapTransport(err error) error {
	var te thrift.TTransportException
	if errors.As(err, &te) && te.Err() != nil {
		return te.Err()
	}
	return err
}

// call runs fn with the client, holding the connection.
func (c *conn) call(ctx context.Context, fn func(ctx context.Context, client *cassandra.CassandraClient) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return fn(ctx, c.client)
}

func (c *conn) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transport.Close()
}

// describeError adds the text of Cassandra's exceptions, whose Error()
// does not always carry the server's reason.
func describeError(err error) error {
	switch e := err.(type) {
	case *cassandra.InvalidRequestException:
		if isLoginRequired(e.Why) {
			return fmt.Errorf("%w: the server requires a login (%s)", ErrAuthentication, e.Why)
		}
		return fmt.Errorf("invalid request: %s", e.Why)
	case *cassandra.NotFoundException:
		return fmt.Errorf("not found")
	case *cassandra.UnavailableException:
		return fmt.Errorf("unavailable")
	case *cassandra.TimedOutException:
		return fmt.Errorf("timed out")
	case *cassandra.AuthenticationException:
		return fmt.Errorf("%w: %s", ErrAuthentication, e.Why)
	case *cassandra.AuthorizationException:
		if isLoginRequired(e.Why) {
			return fmt.Errorf("%w: the server requires a login (%s)", ErrAuthentication, e.Why)
		}
		return fmt.Errorf("authorization: %s", e.Why)
	}
	return unwrapTransport(err)
}

// isLoginRequired recognises Cassandra's refusal of a call made before
// login ("You have not logged in").
func isLoginRequired(why string) bool {
	return why == "You have not logged in"
}
