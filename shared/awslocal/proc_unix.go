//go:build unix

package awslocal

import (
	"os/exec"
	"syscall"
)

// configureProcess puts the server in a process group of its own, so that stopping it stops
// whatever it started too.
func configureProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// stopProcess sends the server's process group SIGTERM, or SIGKILL when kill is set.
func stopProcess(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}
