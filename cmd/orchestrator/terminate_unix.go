//go:build unix

package main

import "syscall"

// terminate asks process pid to stop (SIGTERM).
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
