package daemon_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestStartServesAndStops starts thriftd, asks it what the settings say
// it reports, and stops it.
func TestStartServesAndStops(t *testing.T) {
	ctx := context.Background()
	cfg := daemontest.Config(t)
	cfg.ClusterName = "Daemon Test"
	d, err := daemon.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	conf := &thrift.TConfiguration{ConnectTimeout: 5 * time.Second, SocketTimeout: 5 * time.Second}
	tr := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(d.Addr().String(), conf), conf)
	if err := tr.Open(); err != nil {
		t.Fatal(err)
	}
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	client := cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr)))
	if name, err := client.DescribeClusterName(ctx); err != nil || name != "Daemon Test" {
		t.Errorf("describe_cluster_name = %q, %v", name, err)
	}
	if p, err := client.DescribePartitioner(ctx); err != nil || !strings.HasSuffix(p, "Murmur3Partitioner") {
		t.Errorf("describe_partitioner = %q, %v", p, err)
	}
	tr.Close()
	select {
	case <-d.Done():
		t.Fatal("Done before Stop")
	default:
	}
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	<-d.Done()
	// The store was closed: it opens again.
	d, err = daemon.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("restart on the same directory: %v", err)
	}
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestStartFailures: an invalid partitioner and an address already in
// use are refused, the latter without leaving the store open.
func TestStartFailures(t *testing.T) {
	ctx := context.Background()
	cfg := daemontest.Config(t)
	cfg.Partitioner = "LocalPartitioner"
	if _, err := daemon.Start(ctx, cfg, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a LocalPartitioner daemon started")
	}

	busy := daemontest.Start(t, daemontest.Config(t))
	cfg = daemontest.Config(t)
	cfg.Listen = busy
	if _, err := daemon.Start(ctx, cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), busy) {
		t.Errorf("listening on a busy address: %v", err)
	}
	cfg.Listen = "127.0.0.1:0"
	d, err := daemon.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the store of the failed start is still open: %v", err)
	}
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
