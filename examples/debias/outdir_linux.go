package main

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// renameExchange is Linux's RENAME_EXCHANGE flag of renameat2.
const renameExchange = 1 << 1

// exchange swaps the folders a and b atomically (renameat2 with
// RENAME_EXCHANGE). It reports false, without error, where the kernel or
// the file system does not offer it.
func exchange(a, b string) (bool, error) {
	if sysRenameat2 == 0 {
		return false, nil
	}
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return false, err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return false, err
	}
	const atFDCWD = -100
	fd := atFDCWD
	_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(fd), uintptr(unsafe.Pointer(pa)), uintptr(fd), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	switch {
	case errno == 0:
		return true, nil
	case errors.Is(errno, syscall.ENOSYS), errors.Is(errno, syscall.EINVAL), errors.Is(errno, syscall.EOPNOTSUPP):
		return false, nil
	}
	return false, &os.LinkError{Op: "renameat2", Old: a, New: b, Err: errno}
}

// processAlive reports whether a process with this id runs.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
