package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// What a server process spends on a measured phase. A rate alone does not
// say why a round was slow: the load generator and every server share the
// machine, and a store may flush or compact in one round and not in the
// next. compare reads, before and after each measured phase of a server
// whose process it knows (thriftd, the echo server, Cassandra with
// --cassandra-pid), the process's CPU time from /proc/PID/stat and the
// bytes it had written towards the disk from /proc/PID/io (write_bytes:
// its logs, flushes and compactions, counted when the pages are dirtied,
// through write or a mapping alike). Divided by the calls of the phase,
// they are what a call cost the server, which a compaction in the window
// raises for every call of it.

// clockTicks is the unit of the CPU times of /proc/PID/stat: USER_HZ, 100
// on every Linux architecture.
const clockTicks = 100

// processSample is one reading of a process's counters.
type processSample struct {
	cpuTicks uint64
	// written is write_bytes, or -1 when /proc/PID/io cannot be read (a
	// process of another user).
	written int64
}

// serverUse is what a server process spent on a measured phase.
type serverUse struct {
	CPUSeconds   float64 `json:"cpu_s"`
	CPUPerCallUs float64 `json:"cpu_per_call_us"`
	// WrittenBytes and WrittenPerCall: bytes written towards the disk
	// (-1: unknown).
	WrittenBytes   int64   `json:"written_bytes"`
	WrittenPerCall float64 `json:"written_per_call_bytes"`
}

// useBetween is what the process spent between two readings, over calls
// calls; nil without a call.
func useBetween(before, after processSample, calls uint64) *serverUse {
	if calls == 0 || after.cpuTicks < before.cpuTicks {
		return nil
	}
	u := &serverUse{CPUSeconds: float64(after.cpuTicks-before.cpuTicks) / clockTicks, WrittenBytes: -1, WrittenPerCall: -1}
	u.CPUPerCallUs = u.CPUSeconds * 1e6 / float64(calls)
	if before.written >= 0 && after.written >= before.written {
		u.WrittenBytes = after.written - before.written
		u.WrittenPerCall = float64(u.WrittenBytes) / float64(calls)
	}
	return u
}

// parseStatCPU returns utime+stime from the text of /proc/PID/stat. The
// command name, second field, is in parentheses and may hold spaces and
// parentheses itself, so fields are counted after its last ')'.
func parseStatCPU(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	// After the name: state (field 3) ... utime (14), stime (15).
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want 13 or more", len(f))
	}
	var sum uint64
	for _, s := range f[11:13] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu time %q: %w", s, err)
		}
		sum += v
	}
	return sum, nil
}

// parseWriteBytes returns write_bytes from the text of /proc/PID/io.
func parseWriteBytes(text string) (int64, error) {
	for line := range strings.Lines(text) {
		val, ok := strings.CutPrefix(line, "write_bytes:")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("write_bytes: %w", err)
		}
		return n, nil
	}
	return 0, errors.New("no write_bytes line")
}

// writeServerUse prints what a call cost each server whose process compare
// knows, in its best round, and thriftd's round by round.
func writeServerUse(w io.Writer, c *comparison) {
	uses := func(r *report, pick func(*modeResult) *serverUse) map[string]*serverUse {
		if r == nil {
			return nil
		}
		m := map[string]*serverUse{}
		for i := range r.Modes {
			if u := pick(&r.Modes[i]); u != nil {
				m[r.Modes[i].Mode] = u
			}
		}
		return m
	}
	server := func(m *modeResult) *serverUse { return m.Server }
	loader := func(m *modeResult) *serverUse { return m.LoadGenerator }
	td, cass, echo := uses(c.Thriftd, server), uses(c.Cassandra, server), uses(c.Echo, server)
	if len(td) == 0 {
		return
	}
	// The load generator's CPU a call in each server's turn.
	loads := []map[string]*serverUse{uses(c.Thriftd, loader)}
	loadHeader := "load generator CPU/call (thriftd"
	if c.Cassandra != nil {
		loads = append(loads, uses(c.Cassandra, loader))
		loadHeader += ", Cassandra"
	}
	loads = append(loads, uses(c.Echo, loader))
	loadHeader += ", echo)"

	header := []string{"mode", "thriftd CPU/call"}
	if len(cass) > 0 {
		header = append(header, "Cassandra CPU/call", "Cassandra/thriftd")
	}
	header = append(header, "echo CPU/call", loadHeader, "thriftd written/call")
	if len(cass) > 0 {
		header = append(header, "Cassandra written/call")
	}
	rows := [][]string{header}
	for _, m := range c.Thriftd.Modes {
		t := td[m.Mode]
		row := []string{m.Mode, cpuCell(t)}
		if len(cass) > 0 {
			ratio := "-"
			if u := cass[m.Mode]; u != nil && t != nil && t.CPUPerCallUs > 0 {
				ratio = fmt.Sprintf("%.2f", u.CPUPerCallUs/t.CPUPerCallUs)
			}
			row = append(row, cpuCell(cass[m.Mode]), ratio)
		}
		load := make([]string, len(loads))
		for i, l := range loads {
			load[i] = cpuCell(l[m.Mode])
		}
		row = append(row, cpuCell(echo[m.Mode]), strings.Join(load, ", "), writtenCell(t))
		if len(cass) > 0 {
			row = append(row, writtenCell(cass[m.Mode]))
		}
		rows = append(rows, row)
	}
	fmt.Fprintln(w, "\nwhat a call cost each server in its best round (its process's CPU time, and the bytes it wrote towards the disk), and the load generator in the same round:")
	writeMarkdownTable(w, rows)

	rows = [][]string{{"mode", "calls/s", "CPU/call", "MiB written"}}
	for _, m := range c.Thriftd.Modes {
		if len(m.RoundsServer) < 2 {
			continue
		}
		rates, cpu, written := make([]string, 0, len(m.RoundsServer)), make([]string, 0, len(m.RoundsServer)), make([]string, 0, len(m.RoundsServer))
		for i, u := range m.RoundsServer {
			rates = append(rates, fmt.Sprintf("%.0f", m.RoundsOpsPerSec[i]))
			cpu = append(cpu, cpuCell(u))
			mib := "-"
			if u != nil && u.WrittenBytes >= 0 {
				mib = fmt.Sprintf("%.0f", float64(u.WrittenBytes)/(1<<20))
			}
			written = append(written, mib)
		}
		rows = append(rows, []string{m.Mode, strings.Join(rates, ", "), strings.Join(cpu, ", "), strings.Join(written, ", ")})
	}
	if len(rows) > 1 {
		fmt.Fprintln(w, "\nthriftd round by round (a flush or compaction in a round raises its CPU and its writes per call):")
		writeMarkdownTable(w, rows)
	}
}

// cpuCell is the CPU time per call of u, or "-".
func cpuCell(u *serverUse) string {
	if u == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f µs", u.CPUPerCallUs)
}

// writtenCell is the bytes written per call of u, or "-".
func writtenCell(u *serverUse) string {
	switch {
	case u == nil || u.WrittenPerCall < 0:
		return "-"
	case u.WrittenPerCall < 1<<10:
		return fmt.Sprintf("%.0f B", u.WrittenPerCall)
	case u.WrittenPerCall < 1<<20:
		return fmt.Sprintf("%.1f KiB", u.WrittenPerCall/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", u.WrittenPerCall/(1<<20))
}
