package main

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel stop a server compare started if compare
// itself dies without stopping it.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
