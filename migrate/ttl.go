package migrate

import (
	"fmt"
	"strconv"
	"time"
)

// TTLMode says how a converted cell's TTL is chosen.
type TTLMode int

// TTL modes, as --ttl names them.
const (
	// TTLRemaining writes a TTL'd cell with the time it has left (the
	// default): it expires when it would have expired in the legacy store.
	TTLRemaining TTLMode = iota
	// TTLOriginal writes the cell's original TTL again, restarting it.
	TTLOriginal
	// TTLNone writes every cell without a TTL.
	TTLNone
	// TTLFixed writes every cell with the same TTL.
	TTLFixed
)

// MaxTTL is the largest TTL Cassandra accepts (20 years), in seconds.
const MaxTTL = 20 * 365 * 24 * 60 * 60

// TTLPolicy is the --ttl choice.
type TTLPolicy struct {
	Mode TTLMode
	// Seconds is the TTL of TTLFixed.
	Seconds int32
}

// ParseTTLPolicy reads --ttl: remaining, original, none or a number of
// seconds.
func ParseTTLPolicy(s string) (TTLPolicy, error) {
	switch s {
	case "", "remaining":
		return TTLPolicy{Mode: TTLRemaining}, nil
	case "original":
		return TTLPolicy{Mode: TTLOriginal}, nil
	case "none":
		return TTLPolicy{Mode: TTLNone}, nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n <= 0 || n > MaxTTL {
		return TTLPolicy{}, fmt.Errorf("--ttl %q: expected remaining, original, none or a number of seconds from 1 to %d", s, MaxTTL)
	}
	return TTLPolicy{Mode: TTLFixed, Seconds: int32(n)}, nil
}

// String is the --ttl form of the policy.
func (p TTLPolicy) String() string {
	switch p.Mode {
	case TTLOriginal:
		return "original"
	case TTLNone:
		return "none"
	case TTLFixed:
		return strconv.Itoa(int(p.Seconds))
	}
	return "remaining"
}

// ExpiresAt is when c expires in Unix seconds, 0 if never; a cell that
// carries only its TTL expires TTL seconds after its writetime.
func ExpiresAt(c *Cell) int64 {
	if c.ExpiresAt != 0 || c.TTL <= 0 {
		return c.ExpiresAt
	}
	return c.Timestamp/1e6 + int64(c.TTL)
}

// Apply decides how c is written at now: with TTL ttl (0: none), or not at
// all when the cell has already expired (whatever the mode: an expired
// cell is dead data). Counters never carry a TTL.
func (p TTLPolicy) Apply(c *Cell, now time.Time) (ttl int32, keep bool) {
	if c.Counter {
		return 0, true
	}
	exp := ExpiresAt(c)
	var remaining int64
	if exp != 0 {
		remaining = exp - now.Unix()
		if remaining <= 0 {
			return 0, false
		}
	}
	switch p.Mode {
	case TTLOriginal:
		if c.TTL > 0 {
			return c.TTL, true
		}
		if exp != 0 {
			return clampTTL(remaining), true
		}
		return 0, true
	case TTLNone:
		return 0, true
	case TTLFixed:
		return p.Seconds, true
	}
	if exp == 0 {
		return 0, true
	}
	return clampTTL(remaining), true
}

func clampTTL(s int64) int32 {
	if s > MaxTTL {
		return MaxTTL
	}
	return int32(s)
}
