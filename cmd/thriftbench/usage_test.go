package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	// The fields after the name of a real /proc/PID/stat; utime 1234 and
	// stime 567 are fields 14 and 15.
	rest := " S 1 1234 1234 0 -1 4194560 2800 0 0 0 1234 567 0 0 20 0 12 0 100 2000000 5000 18446744073709551615"
	for _, name := range []string{"(thriftd)", "(java)", "(a b) (c))"} {
		got, err := parseStatCPU("4242 " + name + rest)
		if err != nil || got != 1234+567 {
			t.Errorf("name %s: %d, %v; want %d", name, got, err, 1234+567)
		}
	}
	for _, bad := range []string{"", "4242 thriftd S 1", "4242 (thriftd) S 1 2 3", "4242 (thriftd) S 1 1234 1234 0 -1 4194560 2800 0 0 0 x 567 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseWriteBytes(t *testing.T) {
	io := "rchar: 6976\nwchar: 100\nsyscr: 10\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 52441088\ncancelled_write_bytes: 4096\n"
	if got, err := parseWriteBytes(io); err != nil || got != 52441088 {
		t.Fatalf("got %d, %v", got, err)
	}
	for _, bad := range []string{"", "rchar: 1\n", "write_bytes: many\n"} {
		if _, err := parseWriteBytes(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestUseBetween(t *testing.T) {
	u := useBetween(processSample{cpuTicks: 100, written: 1 << 20}, processSample{cpuTicks: 350, written: 3 << 20}, 50000)
	if u == nil || u.CPUSeconds != 2.5 || u.CPUPerCallUs != 50 || u.WrittenBytes != 2<<20 || u.WrittenPerCall != float64(2<<20)/50000 {
		t.Fatalf("got %+v", u)
	}
	// Writes unknown on either side stay unknown.
	for _, s := range [][2]int64{{-1, 5}, {5, -1}, {-1, -1}} {
		u := useBetween(processSample{cpuTicks: 1, written: s[0]}, processSample{cpuTicks: 2, written: s[1]}, 10)
		if u == nil || u.WrittenBytes != -1 || u.WrittenPerCall != -1 || u.CPUPerCallUs != 1000 {
			t.Errorf("written %v: %+v", s, u)
		}
	}
	if u := useBetween(processSample{cpuTicks: 1}, processSample{cpuTicks: 2}, 0); u != nil {
		t.Errorf("no call: %+v", u)
	}
	if u := useBetween(processSample{cpuTicks: 2}, processSample{cpuTicks: 1}, 10); u != nil {
		t.Errorf("another process (CPU time went back): %+v", u)
	}
}

func TestComparisonShowsWhatACallCostEachServer(t *testing.T) {
	use := func(cpuUs, writtenPerCall float64) *serverUse {
		return &serverUse{CPUPerCallUs: cpuUs, WrittenPerCall: writtenPerCall, WrittenBytes: int64(writtenPerCall * 1e4)}
	}
	res := func(mode string, rounds []float64, uses ...*serverUse) modeResult {
		m := modeResult{Mode: mode, OpsPerSec: rounds[0], Server: uses[0]}
		if len(rounds) > 1 {
			m.RoundsOpsPerSec, m.RoundsServer = rounds, uses
		}
		return m
	}
	c := &comparison{
		Config: &loadConfig{Connections: 32, Modes: []string{"insert", "batch-super"}, Rounds: 2},
		Thriftd: &report{Target: "thriftd", Modes: []modeResult{
			res("insert", []float64{60000, 58000}, use(17, 131), use(18.4, 140)),
			res("batch-super", []float64{11000, 5500}, use(126.7, 2355), use(250, 1.5*(1<<20))),
		}},
		Cassandra: &report{Target: "Cassandra 3.11", Modes: []modeResult{res("insert", []float64{35000}, use(34, 500)), res("batch-super", []float64{5000}, nil)}},
		Echo:      &report{Target: "echo", Modes: []modeResult{res("insert", []float64{120000}, use(7.3, 0)), res("batch-super", []float64{29000}, use(37.4, 0))}},
	}
	c.Thriftd.Modes[0].LoadGenerator = &serverUse{CPUPerCallUs: 10.2}
	c.Cassandra.Modes[0].LoadGenerator = &serverUse{CPUPerCallUs: 11.5}
	c.Echo.Modes[0].LoadGenerator = &serverUse{CPUPerCallUs: 9.8}
	c.fill()
	var out bytes.Buffer
	writeComparison(&out, c)
	text := out.String()
	for _, want := range []string{
		"| mode        | thriftd CPU/call | Cassandra CPU/call | Cassandra/thriftd | echo CPU/call | load generator CPU/call (thriftd, Cassandra, echo) | thriftd written/call | Cassandra written/call |",
		"| insert      |          17.0 µs |            34.0 µs |              2.00 |        7.3 µs |                           10.2 µs, 11.5 µs, 9.8 µs |                131 B |                  500 B |",
		"| batch-super |         126.7 µs |                  - |                 - |       37.4 µs |                                            -, -, - |              2.3 KiB |                      - |",
		"thriftd round by round",
		"| insert      | 60000, 58000 |   17.0 µs, 18.4 µs |        1, 1 |",
		"| batch-super |  11000, 5500 | 126.7 µs, 250.0 µs |   22, 15000 |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}

	// Without any process known, neither table.
	for _, r := range []*report{c.Thriftd, c.Cassandra, c.Echo} {
		for i := range r.Modes {
			r.Modes[i].Server, r.Modes[i].RoundsServer = nil, nil
		}
	}
	out.Reset()
	writeComparison(&out, c)
	if strings.Contains(out.String(), "CPU/call") {
		t.Errorf("a table of CPU without any process read:\n%s", out.String())
	}
}
