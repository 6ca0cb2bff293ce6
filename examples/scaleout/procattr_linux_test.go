package scaleout

import "syscall"

// sysProcAttr makes the kernel kill an instance when the test process
// dies (a timeout, an interrupt), so that no instance outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
