package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCompareProfilesThriftd runs compare with --profiles on real
// binaries, built for the test: every measured turn of thriftd leaves a
// CPU profile that sampled thriftd's Thrift server, a mutex profile, and
// heaps before and after it, and the report says thriftd was profiled.
func TestCompareProfilesThriftd(t *testing.T) {
	dir := buildBinaries(t)
	profiles := filepath.Join(dir, "profiles")
	res := runCompareJSON(t, dir, 3*time.Minute,
		"--cassandra", "", "--raw-badger=false", "--memory-load", "0", "--profiles", profiles,
		"--mode", "insert", "--rounds", "2", "--columns", "5", "--preload", "20", "--keys", "50",
		"--connections", "4", "--duration", "1s", "--warmup", "0")
	if res.ProfilesDir != profiles || !strings.Contains(strings.Join(res.ThriftdFlags, " "), "--pprof-listen 127.0.0.1:") {
		t.Errorf("the report does not say thriftd was profiled: dir %q, flags %q", res.ProfilesDir, res.ThriftdFlags)
	}
	for _, round := range []string{"round1", "round2"} {
		read := func(what string) []byte {
			path := filepath.Join(profiles, "thriftd-insert-"+round+"."+what+".pprof")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("profile %s: %v", what, err)
			}
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s is not a gzipped profile: %v", path, err)
			}
			raw, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("read %s: %v", path, err)
			}
			return raw
		}
		// A profile's string table names the functions of its samples.
		if cpu := read("cpu"); !bytes.Contains(cpu, []byte("thriftbridge/legacy.")) {
			t.Errorf("%s: the CPU profile has no sample of thriftd's Thrift server", round)
		}
		read("mutex")
		if before, after := read("allocs-before"), read("allocs-after"); bytes.Equal(before, after) {
			t.Errorf("%s: the heap after the turn is the heap before it", round)
		}
	}
}

// TestProfilesNotTakenFailTheRun: a profile that cannot be taken is
// logged and kept as the run's error.
func TestProfilesNotTakenFailTheRun(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	p := newTurnProfiler(addr, t.TempDir(), slog.New(slog.DiscardHandler))
	p.start(context.Background(), "insert", time.Second)()
	if err := p.err(); err == nil || !strings.Contains(err.Error(), "mode insert, round 1") {
		t.Errorf("profiles from nowhere: %v, want an error naming the mode and round", err)
	}
}
