package migrate

import (
	"testing"
	"time"
)

func TestParseTTLPolicy(t *testing.T) {
	tests := []struct {
		in   string
		want TTLPolicy
		err  bool
	}{
		{"", TTLPolicy{Mode: TTLRemaining}, false},
		{"remaining", TTLPolicy{Mode: TTLRemaining}, false},
		{"original", TTLPolicy{Mode: TTLOriginal}, false},
		{"none", TTLPolicy{Mode: TTLNone}, false},
		{"86400", TTLPolicy{Mode: TTLFixed, Seconds: 86400}, false},
		{"0", TTLPolicy{}, true},
		{"-5", TTLPolicy{}, true},
		{"630720001", TTLPolicy{}, true},
		{"forever", TTLPolicy{}, true},
	}
	for _, tt := range tests {
		got, err := ParseTTLPolicy(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseTTLPolicy(%q) = %+v, %v", tt.in, got, err)
		}
		if err == nil {
			if back, _ := ParseTTLPolicy(got.String()); back != got {
				t.Errorf("ParseTTLPolicy(%q).String() = %q does not read back", tt.in, got.String())
			}
		}
	}
}

func TestTTLPolicyApply(t *testing.T) {
	now := time.Unix(1_700_000_000, 500_000_000)
	wt := int64(1_699_999_000) * 1e6 // written 1000 s before now
	plain := Cell{Timestamp: wt}
	live := Cell{Timestamp: wt, TTL: 3600, ExpiresAt: 1_699_999_000 + 3600}
	ttlOnly := Cell{Timestamp: wt, TTL: 3600} // a source that knows only TTL and writetime
	lastSecond := Cell{Timestamp: wt, TTL: 1001, ExpiresAt: 1_700_000_001}
	expiring := Cell{Timestamp: wt, TTL: 1000, ExpiresAt: 1_700_000_000}
	expired := Cell{Timestamp: wt, TTL: 10, ExpiresAt: 1_699_999_010}
	counter := Cell{Counter: true, CounterValue: 5, Timestamp: wt}

	type want struct {
		ttl  int32
		keep bool
	}
	tests := []struct {
		policy string
		cell   Cell
		want   want
	}{
		{"remaining", plain, want{0, true}},
		{"remaining", live, want{2600, true}},
		{"remaining", ttlOnly, want{2600, true}},
		{"remaining", lastSecond, want{1, true}},
		{"remaining", expiring, want{0, false}},
		{"remaining", expired, want{0, false}},
		{"remaining", counter, want{0, true}},
		{"original", plain, want{0, true}},
		{"original", live, want{3600, true}},
		{"original", expired, want{0, false}},
		{"none", live, want{0, true}},
		{"none", expired, want{0, false}},
		{"none", counter, want{0, true}},
		{"120", plain, want{120, true}},
		{"120", live, want{120, true}},
		{"120", expired, want{0, false}},
		{"120", counter, want{0, true}},
	}
	for _, tt := range tests {
		p, err := ParseTTLPolicy(tt.policy)
		if err != nil {
			t.Fatal(err)
		}
		ttl, keep := p.Apply(&tt.cell, now)
		if ttl != tt.want.ttl || keep != tt.want.keep {
			t.Errorf("--ttl %s on %+v = (%d, %v), want (%d, %v)", tt.policy, tt.cell, ttl, keep, tt.want.ttl, tt.want.keep)
		}
	}
}
