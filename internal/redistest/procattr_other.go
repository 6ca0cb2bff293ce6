//go:build !linux

package redistest

import "syscall"

// sysProcAttr is nil where the kernel cannot tie redis-server's life to the
// test process's: Stop, run by t.Cleanup, ends it.
func sysProcAttr() *syscall.SysProcAttr { return nil }
