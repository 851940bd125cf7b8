//go:build unix && !linux

package awslocal

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
