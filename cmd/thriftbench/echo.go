package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// maxEchoCells bounds the cells of one echo answer.
const maxEchoCells = 100000

// echoHandler answers at once. The load generator's calls get a result
// shaped like the request, so that the reply costs what a real one costs
// on the wire: get a column of valueSize bytes (for a subcolumn's path
// too, as get-super asks), get_slice as many columns as asked,
// get_range_slices as many rows of as many columns. Keyspaces are
// remembered by name only, so that thriftbench can create, find and drop
// its own. Everything else is zeroCassandra's empty answer.
type echoHandler struct {
	zeroCassandra
	value []byte
	// columns are the columns an answer shares, read-only.
	columns []*cassandra.ColumnOrSuperColumn

	mu        sync.Mutex
	keyspaces map[string]*cassandra.KsDef
}

func newEchoHandler(valueSize int) *echoHandler {
	h := &echoHandler{value: make([]byte, valueSize), keyspaces: map[string]*cassandra.KsDef{}}
	ts := int64(1)
	for i := range maxColumns {
		h.columns = append(h.columns, &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{
			Name: columnName(i), Value: h.value, Timestamp: &ts}})
	}
	return h
}

func (h *echoHandler) DescribeVersion(context.Context) (string, error) { return "19.39.0", nil }

func (h *echoHandler) DescribeClusterName(context.Context) (string, error) {
	return "thriftbench echo", nil
}

func (h *echoHandler) DescribeKeyspace(_ context.Context, name string) (*cassandra.KsDef, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ks, ok := h.keyspaces[name]; ok {
		return ks, nil
	}
	return nil, cassandra.NewNotFoundException()
}

func (h *echoHandler) SystemAddKeyspace(_ context.Context, ks *cassandra.KsDef) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.keyspaces[ks.Name]; ok {
		return "", &cassandra.InvalidRequestException{Why: "Keyspace " + ks.Name + " already exists"}
	}
	h.keyspaces[ks.Name] = ks
	return "echo", nil
}

func (h *echoHandler) SystemDropKeyspace(_ context.Context, name string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.keyspaces, name)
	return "echo", nil
}

// Get answers with the column the path names. A path of a super column
// and a subcolumn gets that subcolumn alone, as a Column, which is how a
// server answers a get of one subcolumn; its SuperColumn takes no part.
func (h *echoHandler) Get(_ context.Context, _ []byte, path *cassandra.ColumnPath, _ cassandra.ConsistencyLevel) (*cassandra.ColumnOrSuperColumn, error) {
	ts := int64(1)
	name := []byte{}
	if path != nil && path.Column != nil {
		name = path.Column
	}
	return &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{Name: name, Value: h.value, Timestamp: &ts}}, nil
}

// sliceCount is how many columns a predicate asks for.
func sliceCount(p *cassandra.SlicePredicate) int {
	switch {
	case p == nil:
		return 0
	case p.SliceRange != nil:
		return int(max(p.SliceRange.Count, 0))
	default:
		return len(p.ColumnNames)
	}
}

func (h *echoHandler) GetSlice(_ context.Context, _ []byte, _ *cassandra.ColumnParent, p *cassandra.SlicePredicate, _ cassandra.ConsistencyLevel) ([]*cassandra.ColumnOrSuperColumn, error) {
	return h.columns[:min(sliceCount(p), len(h.columns))], nil
}

func (h *echoHandler) GetRangeSlices(_ context.Context, _ *cassandra.ColumnParent, p *cassandra.SlicePredicate, kr *cassandra.KeyRange, _ cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	cols := h.columns[:min(sliceCount(p), len(h.columns))]
	rows := 0
	if kr != nil {
		rows = int(max(kr.Count, 0))
	}
	if len(cols) > 0 {
		rows = min(rows, maxEchoCells/len(cols))
	}
	rows = min(rows, maxEchoCells)
	out := make([]*cassandra.KeySlice, rows)
	for i := range out {
		out[i] = &cassandra.KeySlice{Key: preloadedKey(i), Columns: cols}
	}
	return out, nil
}

// setThriftGlobals sets the Thrift library's process-wide settings once.
var setThriftGlobals sync.Once

// echoServer is a bare Thrift server of the Cassandra service: the
// library's simple server, framed transport, binary protocol.
type echoServer struct {
	server *thrift.TSimpleServer
	socket *thrift.TServerSocket
}

// startEchoServer listens on addr (port 0: a free port) and serves until
// stop is called.
func startEchoServer(addr string, valueSize int, log *slog.Logger) (*echoServer, error) {
	setThriftGlobals.Do(func() {
		// As thriftd does (legacy/server.go): no per-request connectivity
		// check goroutine in the generated processor. The ceiling must
		// not pay for what the server it bounds does not do.
		thrift.ServerConnectivityCheckInterval = 0
		// Stop closes the connections still open after this long.
		thrift.ServerStopTimeout = 2 * time.Second
	})

	tcpAddr, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, err
	}
	socket := thrift.NewTServerSocketFromAddrTimeout(tcpAddr, 0)
	if err := socket.Listen(); err != nil {
		return nil, err
	}
	conf := &thrift.TConfiguration{MaxFrameSize: maxFrame}
	srv := thrift.NewTSimpleServer4(cassandra.NewCassandraProcessor(newEchoHandler(valueSize)), socket,
		// Requests read whole and decoded from memory, replies written
		// with one write each, as thriftd does: the ceiling does not pay
		// what thriftd does not.
		slabprotocol.FramedTransportFactory{Config: conf, BufSize: ioBuffer},
		slabprotocol.NewFactory(conf))
	srv.SetLogger(func(msg string) { log.Debug("thrift server", "msg", msg) })
	go func() {
		if err := srv.Serve(); err != nil {
			log.Error("echo server stopped", "err", err)
		}
	}()
	return &echoServer{server: srv, socket: socket}, nil
}

// Addr is the address it listens on.
func (e *echoServer) Addr() string { return e.socket.Addr().String() }

// stop stops accepting and closes the connections.
func (e *echoServer) stop() { _ = e.server.Stop() }

func runEchoCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("thriftbench echo-server", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9170", "address to listen on (port 0: a free port, printed on stdout)")
	valueSize := fs.Int("value-size", 64, "bytes of the value of each column answered")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --listen address")
	logLevel := fs.String("log-level", "info", "log level on stderr: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: thriftbench echo-server [flags]

A Thrift server of the Cassandra service whose methods answer at once with
an empty or fixed result: the ceiling of the protocol and the transport.
It prints "listening on ADDR" on stdout and serves until SIGINT or SIGTERM.

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := parseArgs(fs, args, stderr); !ok {
		return code
	}
	err := func() error {
		if *valueSize < 0 || *valueSize > maxValueSize {
			return usagef("--value-size must be between 0 and %d", maxValueSize)
		}
		if err := checkLoopback(ctx, "--listen", *listen, *allowRemote); err != nil {
			return err
		}
		log, err := newLogger(*logLevel, stderr)
		if err != nil {
			return err
		}
		srv, err := startEchoServer(*listen, *valueSize, log)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "listening on %s\n", srv.Addr())
		log.Info("echo server listening", "addr", srv.Addr())
		<-ctx.Done()
		srv.stop()
		log.Info("echo server stopped")
		return nil
	}()
	return exitFor(fs, err, stderr)
}
