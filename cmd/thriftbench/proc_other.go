//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"runtime"
)

// setDeathSignal does nothing where the kernel cannot signal a child when
// its parent dies; compare stops its servers itself.
func setDeathSignal(*exec.Cmd) {}

// machineCPUs is the number of CPUs of the machine.
func machineCPUs() int { return runtime.NumCPU() }

// cpuTimes does not know the machine's CPU time here: compare does not
// wait for the machine to settle.
func cpuTimes() (busy, total uint64, ok bool) { return 0, 0, false }

// resetPeakRSS cannot reset a process's peak resident set here.
func resetPeakRSS(int) error { return errors.New("only Linux resets a process's peak resident set") }

// sampleProcess cannot read a process's CPU time and writes here.
func sampleProcess(int) (processSample, error) {
	return processSample{}, errors.New("only Linux has /proc/PID/stat and /proc/PID/io")
}
