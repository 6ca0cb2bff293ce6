//go:build !linux

package scaleout

import "syscall"

// sysProcAttr sets nothing where there is no Pdeathsig: an instance of a
// test process that dies without its cleanup may outlive it.
func sysProcAttr() *syscall.SysProcAttr { return nil }
