//go:build !linux

package main

import (
	"os/exec"
	"runtime"
)

// setDeathSignal does nothing where the kernel cannot signal a child when
// its parent dies; compare stops its servers itself.
func setDeathSignal(*exec.Cmd) {}

// machineCPUs is the number of CPUs of the machine.
func machineCPUs() int { return runtime.NumCPU() }
