//go:build !unix

package awslocal

import "os/exec"

func configureProcess(*exec.Cmd) {}

func stopProcess(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
