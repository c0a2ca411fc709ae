// Package rss reads a process's own resident memory as the kernel counts
// it (proc(5), /proc/self/status), for the benchmarks that measure peak
// memory: the current RSS, the high-water mark since it was last reset,
// and the reset. Linux only; elsewhere every call fails.
package rss

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Current is the process's resident memory now (VmRSS), in bytes.
func Current() (uint64, error) { return status("VmRSS") }

// Peak is the most resident memory the process has held since it started
// or since ResetPeak (VmHWM), in bytes: the kernel's own count, which no
// sampling can miss.
func Peak() (uint64, error) { return status("VmHWM") }

// ResetPeak makes the high-water mark the current RSS, so that Peak then
// measures what comes after (writing 5 to /proc/self/clear_refs, Linux 4.0
// and later).
func ResetPeak() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("cannot reset the peak RSS: %w", err)
	}
	return nil
}

// status reads a field of /proc/self/status, given in kB, in bytes.
func status(field string) (uint64, error) {
	text, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(text)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s in /proc/self/status: %w", field, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}
