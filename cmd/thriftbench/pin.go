package main

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// CPU pinning (compare --server-cpus). On a machine of few CPUs the load
// generator takes part of the CPU time each server could have used, and
// more of it from a faster server (it makes more calls), so the ratios of
// a run where everything shares every CPU are below those of the servers
// alone. With --server-cpus every server of the run (thriftd, the echo
// server, the Cassandra at --cassandra-pid) runs on the CPUs named and
// the load generator on the others: each server has the same CPUs to
// itself, and the ratios are those of what each does with them. taskset
// (util-linux) moves the processes: the servers compare starts run under
// it, and the Cassandra node and this process are moved, every thread of
// them, for the run; the node goes back to its CPUs at the end.

// cpuPinning is where a run puts its servers and its load.
type cpuPinning struct {
	servers, load string // CPU lists, as taskset reads them
}

// parseCPUList reads a CPU list as taskset and /sys write them ("0",
// "0-2", "0,3"): the CPUs in order, each once.
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil || z < a {
				return nil, fmt.Errorf("CPU list %q: %q is not a range of CPUs", s, part)
			}
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// formatCPUList writes CPUs as a list taskset reads.
func formatCPUList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// newCPUPinning puts the servers on the CPUs of list, of a machine of
// machine CPUs (numbered 0 to machine-1), and the load on the others.
func newCPUPinning(list string, machine int) (*cpuPinning, error) {
	servers, err := parseCPUList(list)
	if err != nil {
		return nil, err
	}
	var load []int
	for c := 0; c < machine; c++ {
		if !slices.Contains(servers, c) {
			load = append(load, c)
		}
	}
	if last := servers[len(servers)-1]; last >= machine {
		return nil, fmt.Errorf("CPU %d: the machine has CPUs 0 to %d", last, machine-1)
	}
	if len(load) == 0 {
		return nil, fmt.Errorf("CPU list %q leaves no CPU to the load generator", list)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil, fmt.Errorf("pinning needs taskset (util-linux): %w", err)
	}
	return &cpuPinning{servers: formatCPUList(servers), load: formatCPUList(load)}, nil
}

// command is exec.Command(name, args...), run on the servers' CPUs (on
// every CPU when p is nil).
func (p *cpuPinning) command(name string, args ...string) *exec.Cmd {
	if p == nil {
		return exec.Command(name, args...)
	}
	return exec.Command("taskset", append([]string{"-c", p.servers, name}, args...)...)
}

// moveProcess puts every thread of process pid on the CPUs of list, and
// returns the list it ran on before.
func moveProcess(ctx context.Context, pid int, list string) (before string, err error) {
	out, err := exec.CommandContext(ctx, "taskset", "-cp", strconv.Itoa(pid)).Output()
	if err != nil {
		return "", fmt.Errorf("taskset -cp %d: %w", pid, err)
	}
	// "pid 123's current affinity list: 0,1"
	_, was, found := strings.Cut(strings.TrimSpace(string(out)), ": ")
	cpus, err := parseCPUList(was)
	if !found || err != nil {
		return "", fmt.Errorf("taskset -cp %d: unexpected output %q", pid, out)
	}
	before = formatCPUList(cpus)
	if out, err := exec.CommandContext(ctx, "taskset", "-a", "-cp", list, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		return "", fmt.Errorf("taskset -a -cp %s %d: %w: %s", list, pid, err, strings.TrimSpace(string(out)))
	}
	return before, nil
}
