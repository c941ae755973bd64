package main

import (
	"context"
	"log/slog"
	"time"
)

// Settling. On a machine of few CPUs, a server measured right after
// another shares the CPUs with what the other left running: its
// compactions, its collector, its flushes. A turn measured in that wake
// said little about the server measured: a ratio of the same build moved
// by 3x between two rounds. compare therefore waits, before each server's
// turn at a mode, until the machine's CPUs are idle enough, or for at most
// --settle. Every server gets the same quiet start; what a server leaves
// behind during its own measured phase still counts against it.

const (
	// settleBusy is the busy fraction of all CPUs under which the machine
	// counts as settled.
	settleBusy = 0.25
	// settleSample is the window over which the busy fraction is taken.
	settleSample = 250 * time.Millisecond
)

// settleStats sums the waits of a run.
type settleStats struct {
	Turns    int     `json:"turns"`
	WaitedS  float64 `json:"waited_s"`
	TimedOut int     `json:"timed_out"`
}

// settler waits for the machine to settle before a turn.
type settler struct {
	limit time.Duration
	// sample returns the busy and total CPU time of the machine since
	// boot, in any unit; ok is false where the machine does not tell.
	sample func() (busy, total uint64, ok bool)
	log    *slog.Logger
	stats  settleStats
}

// wait returns once the CPUs were at most settleBusy busy over one
// sample window, after limit, or when ctx ends.
func (s *settler) wait(ctx context.Context, mode, server string) {
	if s == nil || s.limit <= 0 {
		return
	}
	start := time.Now()
	busy0, total0, ok := s.sample()
	if !ok {
		return
	}
	s.stats.Turns++
	fraction := 1.0
	for time.Since(start) < s.limit {
		select {
		case <-ctx.Done():
			return
		case <-time.After(settleSample):
		}
		busy1, total1, ok := s.sample()
		if !ok || total1 <= total0 {
			return
		}
		fraction = float64(busy1-busy0) / float64(total1-total0)
		if fraction <= settleBusy {
			waited := time.Since(start)
			s.stats.WaitedS += waited.Seconds()
			s.log.Debug("settled", "mode", mode, "server", server, "waited", waited.Round(time.Millisecond), "busy", fraction)
			return
		}
		busy0, total0 = busy1, total1
	}
	s.stats.WaitedS += time.Since(start).Seconds()
	s.stats.TimedOut++
	s.log.Warn("machine still busy, measuring anyway", "mode", mode, "server", server, "waited", s.limit, "busy", fraction)
}
