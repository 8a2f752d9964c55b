//go:build linux && !amd64 && !arm64

package main

// sysRenameat2 is 0 where this command does not know renameat2's number:
// commit then renames -out aside and the new folder in.
const sysRenameat2 = 0
