package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// warnLog passes everything written to it on to w and keeps the lines
// that begin "warning: ", so that report.html shows every warning the
// command printed on stderr, whichever code printed it.
type warnLog struct {
	w    io.Writer
	mu   sync.Mutex
	part []byte
	kept []string
}

func (l *warnLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.part = append(l.part, p...)
	for {
		nl := bytes.IndexByte(l.part, '\n')
		if nl < 0 {
			break
		}
		if line := string(l.part[:nl]); strings.HasPrefix(line, "warning: ") {
			l.kept = append(l.kept, strings.TrimPrefix(line, "warning: "))
		}
		l.part = l.part[nl+1:]
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

// warnings returns the warnings printed so far, in order.
func (l *warnLog) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.kept...)
}
