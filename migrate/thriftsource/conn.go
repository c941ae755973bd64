package thriftsource

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// conn is one Thrift connection; calls are serialised, as a Thrift client
// is not safe for concurrent use.
type conn struct {
	mu        sync.Mutex
	transport thrift.TTransport
	client    *cassandra.CassandraClient
}

// dial opens a framed, binary-protocol connection to addr.
func dial(addr string, timeout time.Duration) (*conn, error) {
	cfg := &thrift.TConfiguration{
		ConnectTimeout: timeout,
		SocketTimeout:  timeout,
	}
	sock := thrift.NewTSocketConf(addr, cfg)
	transport := thrift.NewTFramedTransportConf(sock, cfg)
	if err := transport.Open(); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	client := cassandra.NewCassandraClientFactory(transport, slabProtocolFactory{cfg: cfg})
	return &conn{transport: transport, client: client}, nil
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
		return fmt.Errorf("invalid request: %s", e.Why)
	case *cassandra.NotFoundException:
		return fmt.Errorf("not found")
	case *cassandra.UnavailableException:
		return fmt.Errorf("unavailable")
	case *cassandra.TimedOutException:
		return fmt.Errorf("timed out")
	case *cassandra.AuthenticationException:
		return fmt.Errorf("authentication: %s", e.Why)
	case *cassandra.AuthorizationException:
		return fmt.Errorf("authorization: %s", e.Why)
	}
	return err
}
