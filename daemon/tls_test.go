package daemon_test

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
)

// tlsFixture is a server certificate, a client certificate from the same
// CA and one from another CA, written where the config can name them.
type tlsFixture struct {
	ca                  *testCA
	certPath, keyPath   string
	caPath              string
	client, otherClient tls.Certificate
}

func newTLSFixture(t *testing.T) *tlsFixture {
	t.Helper()
	ca := newTestCA(t, "thriftd test CA")
	other := newTestCA(t, "another CA")
	certPEM, keyPEM := ca.issue(t, "thriftd", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, "app", x509.ExtKeyUsageClientAuth)
	otherCert, otherKey := other.issue(t, "intruder", x509.ExtKeyUsageClientAuth)
	f := &tlsFixture{
		ca:       ca,
		certPath: writeTestFile(t, "server.pem", certPEM),
		keyPath:  writeTestFile(t, "server.key", keyPEM),
		caPath:   writeTestFile(t, "ca.pem", ca.pem),
	}
	var err error
	if f.client, err = tls.X509KeyPair(clientCert, clientKey); err != nil {
		t.Fatal(err)
	}
	if f.otherClient, err = tls.X509KeyPair(otherCert, otherKey); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *tlsFixture) clientConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: f.ca.pool(), Certificates: certs, MinVersion: tls.VersionTLS12}
}

// TestTLS: a TLS client works; a plaintext client on the TLS port fails
// cleanly, is logged, and the server goes on serving proper clients.
func TestTLS(t *testing.T) {
	f := newTLSFixture(t)
	cfg := daemontest.Config(t)
	cfg.ClusterName = "TLS Test"
	cfg.ClientEncryption = daemon.ClientEncryptionOptions{Enabled: true, Keystore: f.certPath, PrivateKey: f.keyPath}
	d, logs := startLogged(t, cfg)
	addr := d.Addr().String()
	ctx := testContext(t)

	c := mustDialThrift(t, addr, f.clientConfig())
	if name, err := c.DescribeClusterName(ctx); err != nil || name != "TLS Test" {
		t.Fatalf("describe_cluster_name over TLS = %q, %v", name, err)
	}

	plain := mustDialThrift(t, addr, nil)
	if name, err := plain.DescribeClusterName(ctx); err == nil {
		t.Fatalf("a plaintext client on the TLS port was answered %q", name)
	}
	waitFor(t, "the failed handshake in the log", func() bool { return strings.Contains(logs.String(), "TLS handshake failed") })

	// The first client and a new one still work.
	if _, err := c.DescribeClusterName(ctx); err != nil {
		t.Fatalf("the TLS client after the plaintext one: %v", err)
	}
	c2 := mustDialThrift(t, addr, f.clientConfig())
	if _, err := c2.DescribeVersion(ctx); err != nil {
		t.Fatalf("a second TLS client: %v", err)
	}
}

// TestTLSClientCertificates: with a client CA, a client without a
// certificate, or with one of another CA, is refused; one with a
// certificate of the CA is served.
func TestTLSClientCertificates(t *testing.T) {
	f := newTLSFixture(t)
	cfg := daemontest.Config(t)
	cfg.ClientEncryption = daemon.ClientEncryptionOptions{Enabled: true, Keystore: f.certPath, PrivateKey: f.keyPath,
		RequireClientAuth: true, Truststore: f.caPath}
	d, logs := startLogged(t, cfg)
	addr := d.Addr().String()
	ctx := testContext(t)

	for _, tc := range []struct {
		name string
		cfg  *tls.Config
	}{
		{"no certificate", f.clientConfig()},
		{"certificate of another CA", f.clientConfig(f.otherClient)},
	} {
		// TLS 1.3 completes the client's side of the handshake before the
		// server checks the certificate: the refusal comes with the first
		// answer, if not at once.
		c, err := dialThrift(t, addr, tc.cfg)
		if err == nil {
			var v string
			v, err = c.DescribeVersion(ctx)
			if err == nil {
				t.Errorf("%s: served (%q)", tc.name, v)
				continue
			}
		}
		t.Logf("%s: refused: %v", tc.name, err)
	}
	waitFor(t, "the refused certificates in the log", func() bool {
		return strings.Count(logs.String(), "TLS handshake failed") >= 2
	})

	c := mustDialThrift(t, addr, f.clientConfig(f.client))
	if _, err := c.DescribeVersion(ctx); err != nil {
		t.Fatalf("a client with a certificate of the CA: %v", err)
	}
	if !strings.Contains(logs.String(), `client_cert="CN=app"`) {
		t.Errorf("the client certificate was not logged:\n%s", logs)
	}
}

// TestTLSFlagsAndFile: the flags turn TLS on and map onto
// client_encryption_options; a combined PEM keystore (certificate and key
// in one file, as Cassandra's PEM keystores) is accepted; what thriftd
// cannot take is refused with the reason.
func TestTLSFlagsAndFile(t *testing.T) {
	f := newTLSFixture(t)
	cfg := parseFlags(t, "--tls-cert", f.certPath, "--tls-key", f.keyPath, "--tls-client-ca", f.caPath)
	want := daemon.ClientEncryptionOptions{Enabled: true, Keystore: f.certPath, PrivateKey: f.keyPath, RequireClientAuth: true, Truststore: f.caPath}
	if cfg.ClientEncryption != want {
		t.Errorf("flags: %+v, want %+v", cfg.ClientEncryption, want)
	}

	certPEM, _ := readFile(t, f.certPath)
	keyPEM, _ := readFile(t, f.keyPath)
	combined := writeTestFile(t, "keystore.pem", append(certPEM, keyPEM...))
	path := writeTestFile(t, "thriftd.yaml", []byte("client_encryption_options:\n  enabled: true\n  keystore: "+combined+"\n"))
	cfg, err := daemon.LoadConfig(path)
	if err != nil {
		t.Fatalf("combined keystore: %v", err)
	}
	d, _ := startLogged(t, withTestListen(t, cfg))
	c := mustDialThrift(t, d.Addr().String(), f.clientConfig())
	if _, err := c.DescribeVersion(testContext(t)); err != nil {
		t.Fatalf("TLS from a combined keystore: %v", err)
	}

	for _, tc := range []struct{ yaml, want string }{
		{"client_encryption_options:\n  enabled: true\n  keystore_password: cassandra\n", "keystore_password is not supported"},
		{"client_encryption_options:\n  enabled: yes please\n", "enabled must be true or false"},
		{"client_encryption_options:\n  keystroe: x\n", "unknown key client_encryption_options.keystroe"},
		{"client_encryption_options: true\n", "must be a mapping"},
		{"client_encryption_options:\n  enabled: true\n", "keystore (--tls-cert)"},
		{"client_encryption_options:\n  enabled: true\n  keystore: /nonexistent.pem\n", "/nonexistent.pem"},
		{"client_encryption_options:\n  enabled: true\n  keystore: " + f.certPath + "\n", "private_key"},
		{"client_encryption_options:\n  enabled: true\n  keystore: " + combined + "\n  require_client_auth: true\n", "require_client_auth needs the PEM bundle"},
		{"client_encryption_options:\n  enabled: true\n  keystore: " + combined + "\n  require_client_auth: true\n  truststore: " + f.keyPath + "\n", "no PEM certificate"},
	} {
		_, err := daemon.LoadConfig(writeTestFile(t, "bad.yaml", []byte(tc.yaml)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.yaml, err, tc.want)
		}
	}
	// Disabled, the paths are not read (Cassandra keeps them for later).
	if _, err := daemon.LoadConfig(writeTestFile(t, "off.yaml", []byte("client_encryption_options:\n  enabled: false\n  keystore: /nonexistent.pem\n"))); err != nil {
		t.Errorf("disabled TLS with a missing keystore: %v", err)
	}
}
