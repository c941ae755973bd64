package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// thriftd's resident memory in a compare run. The memory goals are a
// resident set of at most 256 MB after the whole run with default
// settings, and at most 512 MB under 64 connections of mixed load.
// compare reads /proc/PID/status:
//
//   - at the end of each of thriftd's turns, keeping the reading of the
//     largest VmRSS: what thriftd holds under load;
//   - after the run: once every server's last turn is over, the machine
//     has settled (settle.go) and thriftd has had no call for
//     afterRunQuiet, as a user looking at the server after a run sees it.
//     The goal of 256 MB is judged on this reading, and its VmHWM (the
//     peak since thriftd started) is held to the same bound, which is
//     stricter than the goal;
//   - then, with --memory-load, thriftd alone under a mixed load over
//     wideConnections connections: the kernel's peak is reset first
//     (resetPeakRSS), so the VmHWM read afterwards is that load's peak.

const (
	// afterRunQuiet is how long thriftd has had no call when its memory
	// after the run is read.
	afterRunQuiet = 5 * time.Second
	// wideConnections and wideGoalMiB: the mixed load of the second
	// memory goal and its bound.
	wideConnections = 64
	wideGoalMiB     = 512
)

// memoryStatus is a process's resident memory from /proc/PID/status.
type memoryStatus struct {
	VmHWMKiB int64 `json:"vmhwm_kib"`
	VmRSSKiB int64 `json:"vmrss_kib"`
	// RssAnon and RssFile split VmRSS (Linux 4.5 and later; -1 when
	// absent): thriftd's own memory, and the pages of the files it maps
	// (the store's tables and logs), which the kernel can reclaim.
	RssAnonKiB int64 `json:"rssanon_kib"`
	RssFileKiB int64 `json:"rssfile_kib"`
}

// wideLoad is the mixed load over wideConnections connections and the
// peak resident set it left.
type wideLoad struct {
	Connections int     `json:"connections"`
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	Errors      uint64  `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	// Memory is read at the end of the load; its VmHWM is the load's peak.
	Memory *memoryStatus `json:"memory"`
}

// turnMemory keeps, of the readings at the end of a target's turns, the
// one of largest VmRSS, and when the last turn ended.
type turnMemory struct {
	pid     int
	log     *slog.Logger
	largest *memoryStatus
	lastEnd time.Time
}

func (m *turnMemory) read() {
	m.lastEnd = time.Now()
	mem, err := readMemoryStatus(m.pid)
	if err != nil {
		m.log.Warn("thriftd memory at the end of a turn", "err", err)
		return
	}
	if m.largest == nil || mem.VmRSSKiB > m.largest.VmRSSKiB {
		m.largest = mem
	}
}

// memoryAfterRun reads the memory of pid once the machine has settled and
// afterRunQuiet has passed since lastCall.
func memoryAfterRun(ctx context.Context, pid int, settle *settler, lastCall time.Time) (*memoryStatus, error) {
	settle.wait(ctx, "memory after the run", "thriftd")
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Until(lastCall.Add(afterRunQuiet))):
	}
	return readMemoryStatus(pid)
}

// measureWideLoad runs the mixed load over wideConnections connections of
// t for d, and reads the peak resident set of pid during it.
func measureWideLoad(ctx context.Context, t *target, pid int, d time.Duration) (*wideLoad, error) {
	if err := resetPeakRSS(pid); err != nil {
		return nil, fmt.Errorf("reset the peak resident set: %w", err)
	}
	if err := t.connect(ctx, wideConnections); err != nil {
		return nil, fmt.Errorf("open %d connections: %w", wideConnections, err)
	}
	t.log.Info("measuring memory", "mode", "mixed", "connections", len(t.workers), "for", d)
	st, elapsed := t.phase(ctx, modes["mixed"].op, d)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	mem, err := readMemoryStatus(pid)
	if err != nil {
		return nil, err
	}
	w := &wideLoad{Connections: len(t.workers), Seconds: elapsed.Seconds(), Errors: st.errors, Memory: mem}
	if w.Seconds > 0 {
		w.OpsPerSec = float64(st.ops) / w.Seconds
	}
	if st.firstErr != nil {
		w.FirstError = st.firstErr.Error()
	}
	return w, nil
}

// readMemoryStatus reads VmHWM and VmRSS from /proc/PID/status.
func readMemoryStatus(pid int) (*memoryStatus, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMemoryStatus(f)
}

func parseMemoryStatus(r io.Reader) (*memoryStatus, error) {
	m := &memoryStatus{VmHWMKiB: -1, VmRSSKiB: -1, RssAnonKiB: -1, RssFileKiB: -1}
	fields := map[string]*int64{"VmHWM": &m.VmHWMKiB, "VmRSS": &m.VmRSSKiB, "RssAnon": &m.RssAnonKiB, "RssFile": &m.RssFileKiB}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		field := fields[key]
		if !ok || field == nil {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return nil, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		*field = n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if m.VmHWMKiB < 0 || m.VmRSSKiB < 0 {
		return nil, errors.New("no VmHWM or VmRSS line")
	}
	return m, nil
}
