//go:build unix && !linux

package awstest

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
