package main

import "testing"

func TestParseCPUTimes(t *testing.T) {
	busy, total, ok := parseCPUTimes("cpu  100 5 50 800 20 3 2 1 7 0\ncpu0 50 2 25 400 10 1 1 0 0 0\n")
	if !ok || busy != 100+5+50+3+2+1 || total != 100+5+50+800+20+3+2+1 {
		t.Fatalf("busy %d total %d ok %v", busy, total, ok)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5", "cpu 1 2"} {
		if _, _, ok := parseCPUTimes(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, total, ok := cpuTimes(); !ok || total == 0 {
		t.Fatalf("this machine's /proc/stat: total %d ok %v", total, ok)
	}
}
