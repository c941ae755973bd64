package main

import (
	"os"
	"path/filepath"
	"testing"
)

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

func TestSampleProcessReadsThisProcess(t *testing.T) {
	before, err := sampleProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.written < 0 {
		t.Fatal("/proc/self/io unreadable for this very process")
	}
	// Spend CPU time until the kernel counts a tick of it, and write.
	f, err := os.Create(filepath.Join(t.TempDir(), "written"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	after := before
	for i := 0; i < 4000 && after.cpuTicks == before.cpuTicks; i++ {
		if _, err := f.WriteAt(block, 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if after, err = sampleProcess(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	if after.cpuTicks == before.cpuTicks {
		t.Fatal("no CPU time counted after 4000 writes of 1 MiB")
	}
	if after.written == before.written {
		t.Skipf("!!! SKIPPED: the file system of %s does not count writes in /proc/PID/io (tmpfs?) !!!", t.TempDir())
	}
	if after.written < before.written+1<<20 {
		t.Errorf("wrote %d bytes, counted %d", 1<<20, after.written-before.written)
	}
	if _, err := sampleProcess(-1); err == nil {
		t.Error("no error for a process that cannot exist")
	}
}
