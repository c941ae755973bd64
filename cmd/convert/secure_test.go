package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/migrate/thriftsource"
)

// testPKI is a CA and the certificates it signed, written as PEM files.
type testPKI struct {
	dir                   string
	caFile                string
	serverCert, serverKey string // for 127.0.0.1 and localhost
	clientCert, clientKey string
	ca                    *x509.Certificate
}

// newTestPKI generates a CA, a server certificate and a client
// certificate under t.TempDir().
func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir()}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "thriftbridge test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	if p.ca, err = x509.ParseCertificate(caDER); err != nil {
		t.Fatal(err)
	}
	p.caFile = p.writePEM(t, "ca.pem", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return p.writePEM(t, name+".pem", "CERTIFICATE", der), p.writePEM(t, name+"-key.pem", "EC PRIVATE KEY", keyDER)
	}
	p.serverCert, p.serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func (p *testPKI) writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTLSConfigFromFiles(t *testing.T) {
	p := newTestPKI(t)
	s := connSettings{TLSCA: p.caFile, TLSCert: p.clientCert, TLSKey: p.clientKey, TLSServerName: "db.example"}
	cfg, err := s.TLSConfig("target")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinVersion != tls.VersionTLS12 || cfg.ServerName != "db.example" || cfg.InsecureSkipVerify {
		t.Errorf("config: min version %x, server name %q, insecure %v", cfg.MinVersion, cfg.ServerName, cfg.InsecureSkipVerify)
	}
	// The roots are the CA: a certificate it signed verifies.
	serverPEM, err := os.ReadFile(p.serverCert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(serverPEM)
	server, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Verify(x509.VerifyOptions{Roots: cfg.RootCAs, DNSName: "localhost"}); err != nil {
		t.Errorf("the server certificate does not verify against --tls-ca: %v", err)
	}
	if len(cfg.Certificates) != 1 {
		t.Fatalf("%d client certificates", len(cfg.Certificates))
	}
	client, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if client.Subject.CommonName != "client" {
		t.Errorf("client certificate of %q", client.Subject.CommonName)
	}

	// No TLS setting: no TLS. --tls alone: the system's roots.
	if cfg, err := (connSettings{Username: "u"}).TLSConfig("source"); cfg != nil || err != nil {
		t.Errorf("no TLS flag gave %v, %v", cfg, err)
	}
	if cfg, err := (connSettings{TLS: true}).TLSConfig("source"); err != nil || cfg == nil || cfg.RootCAs != nil || len(cfg.Certificates) != 0 {
		t.Errorf("--tls: %+v, %v", cfg, err)
	}
	if cfg, err := (connSettings{TLSInsecureSkipVerify: true}).TLSConfig("source"); err != nil || cfg == nil || !cfg.InsecureSkipVerify {
		t.Errorf("--tls-insecure-skip-verify: %+v, %v", cfg, err)
	}

	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    connSettings
		want string
	}{
		{connSettings{TLSCA: filepath.Join(p.dir, "missing.pem")}, "no such file"},
		{connSettings{TLSCA: notPEM}, "no PEM certificate"},
		{connSettings{TLSCert: p.clientCert}, "needs both"},
		{connSettings{TLSKey: p.clientKey}, "needs both"},
		{connSettings{TLSCert: p.clientCert, TLSKey: p.serverKey}, "private key does not match"},
	} {
		_, err := c.s.TLSConfig("target")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "target TLS") {
			t.Errorf("%+v: %v, want an error about %q", c.s, err, c.want)
		}
	}
}

func TestConnectionSettingsResolution(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.yaml")
	if err := os.WriteFile(creds, []byte(`# both ends
username: migrator
password: s3cret
tls_ca: /ca.pem
from:
  username: legacy
  password: old
to:
  tls_server_name: db.example
`), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(args ...string) (*config, error) {
		return parseFlags("data", append([]string{"--from", "thrift://h:9160/Ks", "--to", "cql://h:9042/ks"}, args...), io.Discard)
	}
	c, err := parse("--credentials", creds)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.conn.source, (connSettings{Username: "legacy", Password: "old", TLSCA: "/ca.pem"}); got != want {
		t.Errorf("source %+v, want %+v", got, want)
	}
	if got, want := c.conn.target, (connSettings{Username: "migrator", Password: "s3cret", TLSCA: "/ca.pem", TLSServerName: "db.example"}); got != want {
		t.Errorf("target %+v, want %+v", got, want)
	}
	// Flags win over the file; --from-X and --to-X over --X.
	c, err = parse("--credentials", creds, "--password", "flag", "--to-password", "to-flag", "--from-tls-insecure-skip-verify")
	if err != nil {
		t.Fatal(err)
	}
	if c.conn.source.Password != "flag" || !c.conn.source.TLSInsecureSkipVerify || c.conn.target.Password != "to-flag" || c.conn.target.TLSInsecureSkipVerify {
		t.Errorf("source %+v, target %+v", c.conn.source, c.conn.target)
	}
	// One set of flags for both ends.
	c, err = parse("--username", "u", "--password", "p", "--tls")
	if err != nil {
		t.Fatal(err)
	}
	if c.conn.source != c.conn.target || c.conn.source != (connSettings{Username: "u", Password: "p", TLS: true}) {
		t.Errorf("source %+v, target %+v", c.conn.source, c.conn.target)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("user: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--credentials", bad}, "field user not found"},
		{[]string{"--credentials", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"--password", "p"}, "password and no user name"},
		{[]string{"--to-password", "p", "--from-username", "u"}, "the target has a password and no user name"},
	} {
		_, err := parse(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error about %q", c.args, err, c.want)
		}
	}
	// Per-end flags for an end that is not a server.
	if _, err := parseFlags("data", []string{"--from", "json:/x", "--schema", "s.json", "--to", "cql://h/ks", "--from-username", "u"}, io.Discard); err == nil || !strings.Contains(err.Error(), "not a server") {
		t.Errorf("--from-username with a json: source: %v", err)
	}
	if _, err := parseFlags("data", []string{"--from", "thrift://h/Ks", "--to", "file:x.cql", "--to-tls"}, io.Discard); err == nil || !strings.Contains(err.Error(), "not a cluster") {
		t.Errorf("--to-tls with a file: target: %v", err)
	}
	if _, err := parseFlags("data", []string{"--from", "thrift://h/Ks", "--to", "file:x.cql", "--local-dc", "dc1"}, io.Discard); err == nil || !strings.Contains(err.Error(), "not a cluster") {
		t.Errorf("--local-dc with a file: target: %v", err)
	}
	// The shared flags are fine with a file target: they are the source's.
	if _, err := parseFlags("data", []string{"--from", "thrift://h/Ks", "--to", "file:x.cql", "--username", "u"}, io.Discard); err != nil {
		t.Error(err)
	}
}

func TestDataHelpDocumentsTheConnectionFlags(t *testing.T) {
	var stderr strings.Builder
	_, err := parseFlags("data", []string{"-h"}, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	help := stderr.String()
	for _, want := range []string{"-username", "-password", "-credentials", "-tls-ca", "-local-dc", "--from-X", "--to-X", "from:", "to:"} {
		if !strings.Contains(help, want) {
			t.Errorf("convert data -h does not mention %s", want)
		}
	}
	if strings.Contains(help, "-from-tls-key") {
		t.Error("convert data -h lists every per-end flag")
	}
}

// tlsProxy serves TLS on 127.0.0.1, requiring a client certificate
// signed by the CA, and forwards each connection to backend: thriftd
// behind Cassandra's client_encryption_options.
func tlsProxy(t *testing.T, p *testPKI, backend string) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if err := c.(*tls.Conn).Handshake(); err != nil {
					return
				}
				b, err := net.Dial("tcp", backend)
				if err != nil {
					return
				}
				defer b.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(b, c); b.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
				go func() { io.Copy(c, b); c.(*tls.Conn).CloseWrite(); done <- struct{}{} }()
				<-done
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// TestThriftSourceOverTLS converts a model from thriftd behind a TLS
// endpoint that requires a client certificate, with the --from-tls-*
// flags; without the client certificate, or trusting another CA, the
// connection fails with the TLS reason.
func TestThriftSourceOverTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := fixtures.Load("blog")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startFixtureServer(ctx, filepath.Join(t.TempDir(), "store"), m.LoadTime(), quietLogger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err := loadFixture(ctx, srv.addr(), m, "", thriftsource.ConnOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.clock.set(m.Now)
	p := newTestPKI(t)
	addr := tlsProxy(t, p, srv.addr())
	from := "thrift://" + addr + "/" + m.Keyspace.Name
	now := strconv.FormatInt(m.Now.Unix(), 10)

	script := filepath.Join(t.TempDir(), "blog.cql")
	if _, stderr, err := liveConvert(ctx, "data", "--from", from, "--to", "file:"+script, "--now", now, "--quiet",
		"--from-tls-ca", p.caFile, "--from-tls-cert", p.clientCert, "--from-tls-key", p.clientKey); err != nil {
		t.Fatalf("convert over TLS: %v\n%s", err, stderr)
	}
	sameAsGolden(t, m, fixtures.AutoShape, from, script)

	other := newTestPKI(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		// The server asks for a client certificate.
		{[]string{"--from-tls-ca", p.caFile}, "certificate"},
		{[]string{"--from-tls-ca", other.caFile, "--from-tls-cert", p.clientCert, "--from-tls-key", p.clientKey}, "certificate signed by unknown authority"},
		{[]string{"--from-tls-ca", p.caFile, "--from-tls-cert", p.clientCert, "--from-tls-key", p.clientKey, "--from-tls-server-name", "db.example"}, "not db.example"},
	} {
		args := append([]string{"plan", "--from", from}, c.args...)
		_, _, err := liveConvert(ctx, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error about %q", c.args, err, c.want)
		}
	}
}
