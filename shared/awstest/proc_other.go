//go:build !unix

package awstest

import "os/exec"

func configureProcess(*exec.Cmd) {}

func stopProcess(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
