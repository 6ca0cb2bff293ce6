package redistest

import "syscall"

// sysProcAttr makes the kernel kill redis-server when the test process
// dies, so that a crashed or killed test leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
