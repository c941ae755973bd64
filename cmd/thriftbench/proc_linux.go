package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// setDeathSignal has the kernel stop a server compare started if compare
// itself dies without stopping it.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// machineCPUs is the number of CPUs online, which runtime.NumCPU is not
// when the process runs on some of them only (taskset).
func machineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		z, err2 := a, error(nil)
		if isRange {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			return runtime.NumCPU()
		}
		n += z - a + 1
	}
	return n
}

// cpuTimes is the machine's busy and total CPU time since boot, in clock
// ticks, from the first line of /proc/stat.
func cpuTimes() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseCPUTimes(string(b))
}

// parseCPUTimes reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal ...; idle and iowait are not busy. Guest time is
// counted in user already, so the fields after steal are left out.
func parseCPUTimes(stat string) (busy, total uint64, ok bool) {
	line, _, _ := strings.Cut(stat, "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0, 0, false
	}
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += v
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return busy, total, true
}

// resetPeakRSS sets the peak resident set (VmHWM) of process pid to its
// resident set now (clear_refs, Linux 4.0 and later).
func resetPeakRSS(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// sampleProcess reads the CPU time and the bytes written of process pid
// (usage.go); written is -1 when /proc/PID/io cannot be read.
func sampleProcess(pid int) (processSample, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return processSample{}, err
	}
	s := processSample{written: -1}
	if s.cpuTicks, err = parseStatCPU(string(stat)); err != nil {
		return processSample{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	if io, err := os.ReadFile(dir + "/io"); err == nil {
		if s.written, err = parseWriteBytes(string(io)); err != nil {
			return processSample{}, fmt.Errorf("%s/io: %w", dir, err)
		}
	}
	return s, nil
}
