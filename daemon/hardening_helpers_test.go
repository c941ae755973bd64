package daemon_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// hardeningTimeout bounds every network step of these tests.
const hardeningTimeout = 10 * time.Second

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a leaf certificate for 127.0.0.1, for a server or a client;
// it returns the certificate and key in PEM.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// writeTestFile writes data in the test's directory and returns its path.
func writeTestFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startLogged starts thriftd with cfg, logging into the returned buffer,
// and stops it when the test ends.
func startLogged(t *testing.T, cfg daemon.Config, opts ...daemon.Option) (*daemon.Daemon, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, err := daemon.Start(context.Background(), cfg, logger, opts...)
	if err != nil {
		t.Fatalf("start thriftd: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop thriftd: %v", err)
		}
	})
	return d, logs
}

// thriftClient is a generated client and its transport.
type thriftClient struct {
	*cassandra.CassandraClient
	tr thrift.TTransport
}

// dialThrift opens a framed binary client on addr: over TLS with tlsCfg,
// plaintext when tlsCfg is nil.
func dialThrift(t *testing.T, addr string, tlsCfg *tls.Config) (*thriftClient, error) {
	t.Helper()
	conf := &thrift.TConfiguration{ConnectTimeout: hardeningTimeout, SocketTimeout: hardeningTimeout, TLSConfig: tlsCfg}
	var sock thrift.TTransport
	if tlsCfg != nil {
		sock = thrift.NewTSSLSocketConf(addr, conf)
	} else {
		sock = thrift.NewTSocketConf(addr, conf)
	}
	tr := thrift.NewTFramedTransportConf(sock, conf)
	if err := tr.Open(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = tr.Close() })
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	return &thriftClient{cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr))), tr}, nil
}

// mustDialThrift is dialThrift that fails the test on an error.
func mustDialThrift(t *testing.T, addr string, tlsCfg *tls.Config) *thriftClient {
	t.Helper()
	c, err := dialThrift(t, addr, tlsCfg)
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), hardeningTimeout)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or the test times out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hardeningTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// parseFlags resolves thriftd's flags as cmd/thriftd does.
func parseFlags(t *testing.T, args ...string) daemon.Config {
	t.Helper()
	fs := flag.NewFlagSet("thriftd", flag.ContinueOnError)
	var values daemon.Config
	flags := daemon.RegisterFlags(fs, &values)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := flags.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readFile(t *testing.T, path string) ([]byte, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, nil
}

// withTestListen points cfg at a free loopback port and a fresh directory.
func withTestListen(t *testing.T, cfg daemon.Config) daemon.Config {
	base := daemontest.Config(t)
	cfg.Listen, cfg.DataDir = base.Listen, base.DataDir
	return cfg
}
