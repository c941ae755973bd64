package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ClientEncryptionOptions is TLS on the Thrift port, under Cassandra's
// client_encryption_options names. Cassandra reads Java keystores; thriftd
// reads PEM files, as Cassandra 4.1's PEMBasedSslContextFactory does:
//
//	enabled             TLS on or off (the flags --tls-cert, --tls-key and
//	                    --tls-client-ca turn it on)
//	keystore            PEM certificate chain of the server, leaf first; it may
//	                    hold the private key too (--tls-cert)
//	private_key         PEM private key, when keystore does not hold it; a
//	                    thriftd key, not Cassandra's (--tls-key)
//	require_client_auth clients must present a certificate signed by a CA of
//	                    truststore (--tls-client-ca sets it)
//	truststore          PEM bundle of the CAs trusted to sign client
//	                    certificates (--tls-client-ca)
//
// Cassandra's keystore_password, truststore_password, protocol,
// cipher_suites, store_type, algorithm and optional are refused: PEM files
// here are not encrypted, and Go's TLS defaults (TLS 1.2 and later, its
// secure cipher suites) are kept.
type ClientEncryptionOptions struct {
	Enabled           bool   `yaml:"enabled"`
	Keystore          string `yaml:"keystore"`
	PrivateKey        string `yaml:"private_key"`
	RequireClientAuth bool   `yaml:"require_client_auth"`
	Truststore        string `yaml:"truststore"`
}

// clientEncryptionKey is the YAML key of ClientEncryptionOptions.
const clientEncryptionKey = "client_encryption_options"

// clientEncryptionKeys are the keys client_encryption_options may hold,
// with whether each is a boolean.
var clientEncryptionKeys = []struct {
	key     string
	boolean bool
}{
	{"enabled", true}, {"keystore", false}, {"private_key", false},
	{"require_client_auth", true}, {"truststore", false},
}

// unsupportedClientEncryptionKeys are Cassandra's keys that thriftd does not
// take, with why.
var unsupportedClientEncryptionKeys = map[string]string{
	"keystore_password":   "thriftd reads unencrypted PEM files: decrypt the key (openssl pkey -in key.pem -out plain.pem)",
	"truststore_password": "thriftd reads a PEM CA bundle, which has no password",
	"store_type":          "thriftd reads PEM files only",
	"protocol":            "thriftd speaks TLS 1.2 and 1.3",
	"accepted_protocols":  "thriftd speaks TLS 1.2 and 1.3",
	"cipher_suites":       "thriftd uses Go's secure cipher suites",
	"algorithm":           "thriftd reads PEM files only",
	"optional":            "the port serves either TLS or plaintext, not both",
}

// checkClientEncryptionYAML checks the client_encryption_options mapping
// of the config file named path before it is decoded.
func checkClientEncryptionYAML(path string, value *yaml.Node) error {
	if value.Kind == yaml.ScalarNode && value.Tag == "!!null" {
		return nil
	}
	if value.Kind != yaml.MappingNode {
		return fmt.Errorf("config %s:%d: %s must be a mapping (enabled: true, keystore: cert.pem, ...)", path, value.Line, clientEncryptionKey)
	}
	for i := 0; i+1 < len(value.Content); i += 2 {
		k, v := value.Content[i], value.Content[i+1]
		if why, ok := unsupportedClientEncryptionKeys[k.Value]; ok {
			return fmt.Errorf("config %s:%d: %s.%s is not supported: %s", path, k.Line, clientEncryptionKey, k.Value, why)
		}
		j := slices.IndexFunc(clientEncryptionKeys, func(e struct {
			key     string
			boolean bool
		}) bool {
			return e.key == k.Value
		})
		if j < 0 {
			known := make([]string, len(clientEncryptionKeys))
			for n, e := range clientEncryptionKeys {
				known[n] = e.key
			}
			return fmt.Errorf("config %s:%d: unknown key %s.%s (known keys: %s)", path, k.Line, clientEncryptionKey, k.Value, strings.Join(known, ", "))
		}
		if clientEncryptionKeys[j].boolean && v.Tag != "!!bool" {
			return fmt.Errorf("config %s:%d: %s.%s must be true or false, not %q", path, v.Line, clientEncryptionKey, k.Value, v.Value)
		}
	}
	return nil
}

// validate checks the options, loading the files, and returns every
// problem.
func (o ClientEncryptionOptions) validate() []error {
	if !o.Enabled {
		return nil
	}
	_, err := o.TLSConfig()
	if err != nil {
		return []error{err}
	}
	return nil
}

// TLSConfig returns the server's TLS configuration, or nil when TLS is
// off. It reads the PEM files.
func (o ClientEncryptionOptions) TLSConfig() (*tls.Config, error) {
	if !o.Enabled {
		return nil, nil
	}
	var errs []error
	var cert tls.Certificate
	if o.Keystore == "" {
		errs = append(errs, fmt.Errorf("invalid %s.keystore (--tls-cert): TLS is enabled, so the server's PEM certificate is needed", clientEncryptionKey))
	} else {
		certPEM, err := os.ReadFile(o.Keystore)
		keyPEM := certPEM
		if err == nil && o.PrivateKey != "" {
			keyPEM, err = os.ReadFile(o.PrivateKey)
		}
		if err == nil {
			cert, err = tls.X509KeyPair(certPEM, keyPEM)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid %s.keystore %q / private_key %q (--tls-cert, --tls-key): %w", clientEncryptionKey, o.Keystore, o.PrivateKey, err))
		}
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if o.RequireClientAuth {
		pool, err := loadCAPool(o.Truststore)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid %s.truststore %q (--tls-client-ca): %w", clientEncryptionKey, o.Truststore, err))
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// loadCAPool reads a PEM bundle of CA certificates.
func loadCAPool(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, errors.New("require_client_auth needs the PEM bundle of the CAs that sign client certificates")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("no PEM certificate in the file")
	}
	return pool, nil
}
