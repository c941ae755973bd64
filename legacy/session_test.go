package legacy

import (
	"context"
	"net"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func TestSessionState(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}
	s := NewSession(7, addr)
	if s.ID() != 7 || s.RemoteAddr() != addr || s.Keyspace() != "" || s.LoggedIn() || s.CQLVersion() != "" {
		t.Fatalf("new session: %+v", s)
	}
	s.SetKeyspace("ks")
	s.SetCQLVersion("3.0.0")
	s.Login("alice")
	if s.Keyspace() != "ks" || s.CQLVersion() != "3.0.0" || !s.LoggedIn() || s.User() != "alice" {
		t.Errorf("session after updates: %+v", s)
	}
	if s.TakeTraceNextQuery() {
		t.Error("trace flag set on a new session")
	}
	s.SetTraceNextQuery(true)
	if !s.TakeTraceNextQuery() || s.TakeTraceNextQuery() {
		t.Error("the trace flag must hold for exactly one query")
	}
}

func TestSessionContext(t *testing.T) {
	if SessionFrom(context.Background()) != nil {
		t.Error("a bare context carries a session")
	}
	s := NewSession(1, nil)
	if got := SessionFrom(WithSession(context.Background(), s)); got != s {
		t.Errorf("SessionFrom = %p, want %p", got, s)
	}
}

func TestLoginRecordsUser(t *testing.T) {
	h := &Handler{}
	s := NewSession(1, nil)
	ctx := WithSession(context.Background(), s)
	auth := &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": "bob", "password": "pw"}}
	if err := h.Login(ctx, auth); err != nil {
		t.Fatal(err)
	}
	if !s.LoggedIn() || s.User() != "bob" {
		t.Errorf("session after login: logged in %v, user %q", s.LoggedIn(), s.User())
	}
	if err := h.Login(context.Background(), auth); err != nil {
		t.Errorf("login without a session: %v", err)
	}
}
