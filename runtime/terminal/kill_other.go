//go:build !linux && !windows

package terminal

import "syscall"

// killSession kills the shell's process group (sid is its id too: the shell leads its session).
func killSession(sid int, sig syscall.Signal) { syscall.Kill(-sid, sig) }
