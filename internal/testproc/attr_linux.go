package testproc

import "syscall"

// SysProcAttr returns the attributes for exec.Cmd.SysProcAttr that make
// the kernel kill the child (SIGKILL) when the test process dies.
func SysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
