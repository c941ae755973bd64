package main

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// fakeCPU replays busy fractions, one per sample window.
type fakeCPU struct {
	busy, total uint64
	fractions   []float64
	calls       int
}

func (f *fakeCPU) sample() (uint64, uint64, bool) {
	if f.calls > 0 {
		i := min(f.calls-1, len(f.fractions)-1)
		f.busy += uint64(100 * f.fractions[i])
		f.total += 100
	}
	f.calls++
	return f.busy, f.total, true
}

func TestSettlerWaitsForQuietCPUs(t *testing.T) {
	cpu := &fakeCPU{fractions: []float64{0.9, 0.6, 0.2}}
	s := &settler{limit: 10 * time.Second, sample: cpu.sample, log: slog.New(slog.DiscardHandler)}
	s.wait(context.Background(), "insert", "thriftd")
	if cpu.calls != 4 {
		t.Fatalf("sampled %d times, want 4 (the start and three windows, the third quiet)", cpu.calls)
	}
	if s.stats.Turns != 1 || s.stats.TimedOut != 0 || s.stats.WaitedS < 3*settleSample.Seconds() {
		t.Fatalf("stats %+v", s.stats)
	}
}

func TestSettlerGivesUpAfterItsLimit(t *testing.T) {
	cpu := &fakeCPU{fractions: []float64{1}}
	s := &settler{limit: 2 * settleSample, sample: cpu.sample, log: slog.New(slog.DiscardHandler)}
	start := time.Now()
	s.wait(context.Background(), "get", "echo")
	if s.stats.TimedOut != 1 || time.Since(start) > 10*settleSample {
		t.Fatalf("stats %+v after %s", s.stats, time.Since(start))
	}
}

func TestSettlerOff(t *testing.T) {
	cpu := &fakeCPU{fractions: []float64{1}}
	for _, s := range []*settler{nil, {limit: 0, sample: cpu.sample}} {
		s.wait(context.Background(), "get", "echo")
	}
	if cpu.calls != 0 {
		t.Fatalf("a settler that is off sampled the CPUs %d times", cpu.calls)
	}
}
