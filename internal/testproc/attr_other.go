//go:build !linux

package testproc

import "syscall"

// SysProcAttr returns nil where the kernel cannot kill a child with its
// parent: a child of a test process that dies before its cleanup may
// outlive it there.
func SysProcAttr() *syscall.SysProcAttr { return nil }
