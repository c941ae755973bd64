package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// maxFrame is the largest frame the client accepts: Cassandra's
// thrift_framed_transport_size_in_mb defaults to 15.
const maxFrame = 15 << 20

// ioBuffer is the size of the socket buffers of a connection.
const ioBuffer = 64 << 10

// client is one connection: the generated client over the framed
// transport and the binary protocol, as Thrift-era clients used.
type client struct {
	tr thrift.TTransport
	*cassandra.CassandraClient
	// stop unregisters the close-on-cancel hook.
	stop func() bool
}

// dial opens a connection and, if keyspace is not empty, selects it. The
// connection is closed when ctx is cancelled, which aborts a call in
// flight; each call is bounded by timeout.
func dial(ctx context.Context, addr, keyspace string, timeout time.Duration) (*client, error) {
	conf := &thrift.TConfiguration{
		ConnectTimeout: timeout,
		SocketTimeout:  timeout,
		MaxFrameSize:   maxFrame,
	}
	// Each call is one write on the socket, the length and the message
	// together, and each reply is read whole before it is decoded from
	// memory; the bytes on the wire are those of any framed client.
	tr := slabprotocol.NewFramedTransport(thrift.NewTSocketConf(addr, conf), conf, ioBuffer)
	if err := tr.Open(); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, err)
	}
	pf := slabprotocol.NewFactory(conf)
	c := &client{
		tr:              tr,
		CassandraClient: cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr))),
	}
	c.stop = context.AfterFunc(ctx, func() { _ = tr.Close() })
	if keyspace != "" {
		if err := c.SetKeyspace(ctx, keyspace); err != nil {
			c.Close()
			return nil, fmt.Errorf("set_keyspace %s on %s: %w", keyspace, addr, describeErr(err))
		}
	}
	return c, nil
}

// Close closes the connection.
func (c *client) Close() {
	c.stop()
	_ = c.tr.Close()
}

// connectionBroken reports whether err leaves the connection unusable: an
// exception declared by the IDL or an application exception was read in
// full, anything else (a transport or protocol error) was not.
func connectionBroken(err error) bool {
	var (
		ire *cassandra.InvalidRequestException
		nfe *cassandra.NotFoundException
		ue  *cassandra.UnavailableException
		te  *cassandra.TimedOutException
		ae  *cassandra.AuthenticationException
		aze *cassandra.AuthorizationException
		sde *cassandra.SchemaDisagreementException
		tae thrift.TApplicationException
	)
	switch {
	case errors.As(err, &ire), errors.As(err, &nfe), errors.As(err, &ue), errors.As(err, &te),
		errors.As(err, &ae), errors.As(err, &aze), errors.As(err, &sde):
		return false
	case errors.As(err, &tae):
		return false
	}
	return true
}

// describeErr gives the declared exceptions, whose Error methods print
// Go struct syntax, a readable message.
func describeErr(err error) error {
	var (
		ire *cassandra.InvalidRequestException
		nfe *cassandra.NotFoundException
		ue  *cassandra.UnavailableException
		te  *cassandra.TimedOutException
	)
	switch {
	case errors.As(err, &ire):
		return fmt.Errorf("InvalidRequestException: %s", ire.Why)
	case errors.As(err, &nfe):
		return errors.New("NotFoundException")
	case errors.As(err, &ue):
		return errors.New("UnavailableException")
	case errors.As(err, &te):
		return errors.New("TimedOutException")
	}
	return err
}
