package cqlconn

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Settings are how to log in to a cluster and encrypt the connection, as
// flags and credentials files give them (these YAML field names).
type Settings struct {
	Username              string `yaml:"username"`
	Password              string `yaml:"password"`
	TLS                   bool   `yaml:"tls"`
	TLSCA                 string `yaml:"tls_ca"`
	TLSCert               string `yaml:"tls_cert"`
	TLSKey                string `yaml:"tls_key"`
	TLSServerName         string `yaml:"tls_server_name"`
	TLSInsecureSkipVerify bool   `yaml:"tls_insecure_skip_verify"`
}

// Over returns s with the settings o sets (its non-zero fields) in place
// of s's.
func (s Settings) Over(o Settings) Settings {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&s.Username, o.Username)
	set(&s.Password, o.Password)
	set(&s.TLSCA, o.TLSCA)
	set(&s.TLSCert, o.TLSCert)
	set(&s.TLSKey, o.TLSKey)
	set(&s.TLSServerName, o.TLSServerName)
	s.TLS = s.TLS || o.TLS
	s.TLSInsecureSkipVerify = s.TLSInsecureSkipVerify || o.TLSInsecureSkipVerify
	return s
}

// IsZero reports whether s sets nothing.
func (s Settings) IsZero() bool { return s == Settings{} }

// UsesTLS reports whether any TLS setting is given: each implies TLS.
func (s Settings) UsesTLS() bool {
	return s.TLS || s.TLSCA != "" || s.TLSCert != "" || s.TLSKey != "" || s.TLSServerName != "" || s.TLSInsecureSkipVerify
}

// Check refuses a password without a user name; end names the side of
// the connection in the error (e.g. "target").
func (s Settings) Check(end string) error {
	if s.Password != "" && s.Username == "" {
		return fmt.Errorf("the %s has a password and no user name", end)
	}
	return nil
}

// TLSConfig builds the TLS configuration of the connection (nil without
// TLS): TLS 1.2 at least, the CA certificates of TLSCA (PEM) as the roots
// to verify the server with (default: the system's), a client certificate
// from TLSCert and TLSKey (PEM), the name to verify the server's
// certificate against (default: the host of its address). end names the
// side of the connection in errors (e.g. "target").
func (s Settings) TLSConfig(end string) (*tls.Config, error) {
	if !s.UsesTLS() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.TLSServerName, InsecureSkipVerify: s.TLSInsecureSkipVerify}
	if s.TLSCA != "" {
		pem, err := os.ReadFile(s.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("%s TLS CA: %w", end, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s TLS CA %s: no PEM certificate in the file", end, s.TLSCA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case s.TLSCert != "" && s.TLSKey != "":
		pair, err := tls.LoadX509KeyPair(s.TLSCert, s.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("%s TLS client certificate %s, key %s: %w", end, s.TLSCert, s.TLSKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case s.TLSCert != "" || s.TLSKey != "":
		return nil, fmt.Errorf("%s TLS: a client certificate needs both tls-cert and tls-key", end)
	}
	return cfg, nil
}

// ReadCredentials decodes the YAML credentials file at path into dst (a
// *Settings, or a struct that inlines one). Unknown keys are errors, so
// that a misspelt key does not go unnoticed. It returns the file's
// permissions, for a warning when other users can read it.
func ReadCredentials(path string, dst any) (os.FileMode, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("credentials: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("credentials %s: %w", path, err)
	}
	var perm os.FileMode
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	return perm, nil
}

// DefaultPort is the native protocol port of a contact point given
// without one.
const DefaultPort = "9042"

// ParseHosts reads a comma-separated list of contact points, host or
// host:port (port DefaultPort when left out).
func ParseHosts(list string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(list, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, fmt.Errorf("%q: an empty host in the list", list)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = h, DefaultPort
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" || strings.ContainsAny(host, "/ ") {
			return nil, fmt.Errorf("%q: %q is not host or host:port", list, h)
		}
		h = net.JoinHostPort(host, port)
		hosts = append(hosts, h)
	}
	return hosts, nil
}
