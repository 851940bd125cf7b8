//go:build linux

package awslocal

import "syscall"

// setParentDeathSignal has the kernel kill the server when the process that started it dies without
// stopping it (killed by a timeout, say), so that no emulator outlives its user.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
