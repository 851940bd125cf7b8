//go:build linux

package awstest

import "syscall"

// setParentDeathSignal has the kernel kill the server when the test binary dies without running
// its cleanup (killed by a timeout, say), so that no emulator outlives its tests.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
