//go:build !linux

package main

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// exchange reports false: outside Linux, commit renames -out aside and
// the new folder in (two renames; see outDir).
func exchange(a, b string) (bool, error) { return false, nil }

// processAlive reports whether a process with this id runs (on Windows:
// whether it can be found, which is always true there, so stale folders
// are left for the user).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}
