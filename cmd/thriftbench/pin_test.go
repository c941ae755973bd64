package main

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"0", "0"}, {"1-3", "1,2,3"}, {"3,0-1,1", "0,1,3"}, {" 2 , 0", "0,2"},
	} {
		got, err := parseCPUList(c.in)
		if err != nil || formatCPUList(got) != c.want {
			t.Errorf("parseCPUList(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "a", "-1", "3-1", "0-", "1,,2"} {
		if got, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", bad, got)
		}
	}
}

func TestNewCPUPinningRefuses(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("!!! SKIPPED: no taskset (util-linux)")
	}
	if p, err := newCPUPinning("0-1", 2); err == nil {
		t.Errorf("every CPU to the servers: %+v, want an error", p)
	}
	if p, err := newCPUPinning("2", 2); err == nil {
		t.Errorf("a CPU the machine lacks: %+v, want an error", p)
	}
	p, err := newCPUPinning("1", 4)
	if err != nil || p.servers != "1" || p.load != "0,2,3" {
		t.Errorf("newCPUPinning(1, 4) = %+v, %v", p, err)
	}
}

// allowedCPUs is the CPU list process pid may run on.
func allowedCPUs(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}

// normalCPUList writes a CPU list as formatCPUList does.
func normalCPUList(t *testing.T, list string) string {
	t.Helper()
	cpus, err := parseCPUList(list)
	if err != nil {
		t.Fatal(err)
	}
	return formatCPUList(cpus)
}

// TestPinningMovesProcesses: a server started through the pinning runs
// on the servers' CPUs, and moveProcess moves a running process and
// tells where it ran.
func TestPinningMovesProcesses(t *testing.T) {
	if runtime.GOOS != "linux" || machineCPUs() < 2 {
		t.Skip("!!! SKIPPED: pinning needs Linux and two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("!!! SKIPPED: no taskset (util-linux)")
	}
	last := strconv.Itoa(machineCPUs() - 1)
	p, err := newCPUPinning(last, machineCPUs())
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.command("grep", "Cpus_allowed_list", "/proc/self/status").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(string(out), "Cpus_allowed_list:")); got != last {
		t.Errorf("a server started pinned runs on CPUs %s, want %s", got, last)
	}

	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	was := normalCPUList(t, allowedCPUs(t, cmd.Process.Pid))
	ctx := context.Background()
	before, err := moveProcess(ctx, cmd.Process.Pid, "0")
	if err != nil {
		t.Fatal(err)
	}
	if before != was {
		t.Errorf("moveProcess said the process ran on %s, /proc says %s", before, was)
	}
	if got := allowedCPUs(t, cmd.Process.Pid); got != "0" {
		t.Errorf("moved to CPU 0, runs on %s", got)
	}
	if _, err := moveProcess(ctx, cmd.Process.Pid, before); err != nil {
		t.Fatal(err)
	}
	if got := normalCPUList(t, allowedCPUs(t, cmd.Process.Pid)); got != was {
		t.Errorf("moved back, runs on %s, want %s", got, was)
	}
}

// TestCompareServerCPUs runs compare with --server-cpus on real binaries:
// the run goes through, and the report says where the servers and the
// load ran.
func TestCompareServerCPUs(t *testing.T) {
	if runtime.GOOS != "linux" || machineCPUs() < 2 {
		t.Skip("!!! SKIPPED: pinning needs Linux and two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("!!! SKIPPED: no taskset (util-linux)")
	}
	last := machineCPUs() - 1
	var load []int
	for c := 0; c < last; c++ {
		load = append(load, c)
	}
	res := runCompareJSON(t, buildBinaries(t), 3*time.Minute,
		"--cassandra", "", "--raw-badger=false", "--memory-load", "0", "--server-cpus", strconv.Itoa(last),
		"--mode", "insert", "--columns", "5", "--preload", "20", "--keys", "50",
		"--connections", "4", "--duration", "1s", "--warmup", "0")
	if res.ServerCPUs != strconv.Itoa(last) || res.LoadCPUs != formatCPUList(load) {
		t.Errorf("the report says servers on %q, load on %q; want %d and %s", res.ServerCPUs, res.LoadCPUs, last, formatCPUList(load))
	}
	for name, r := range map[string]*report{"thriftd": res.Thriftd, "echo": res.Echo} {
		if r == nil || len(r.Modes) != 1 || r.Modes[0].Ops == 0 || r.Modes[0].Errors != 0 {
			t.Errorf("%s: %+v, want inserts without errors", name, r)
		}
	}
}
