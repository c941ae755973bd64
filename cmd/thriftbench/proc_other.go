//go:build !linux

package main

import "os/exec"

// setDeathSignal does nothing where the kernel cannot signal a child when
// its parent dies; compare stops its servers itself.
func setDeathSignal(*exec.Cmd) {}
