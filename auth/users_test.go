package auth

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// An unknown user is refused after a bcrypt comparison of the same cost
// as a known user's, so the time of a refusal does not tell which user
// names exist.
func TestUnknownUserCostsOneComparison(t *testing.T) {
	cost, err := bcrypt.Cost([]byte(dummyHash))
	if err != nil {
		t.Fatalf("dummyHash is not a bcrypt hash: %v", err)
	}
	if cost != Cost {
		t.Errorf("dummyHash has cost %d, new hashes %d", cost, Cost)
	}
	u := &Users{Users: map[string]*User{}}
	if err := u.Add("alice", "alice's password"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, password string
		want           bool
	}{
		{"alice", "alice's password", true},
		{"alice", "wrong", false},
		{"bob", "alice's password", false},
		{"bob", "", false},
	} {
		if got := u.Authenticate(c.name, c.password); got != c.want {
			t.Errorf("Authenticate(%q, %q) = %v, want %v", c.name, c.password, got, c.want)
		}
	}
}
