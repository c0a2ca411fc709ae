//go:build unix

package connlimit

import (
	"math"
	"syscall"
)

// OpenFileLimit is how many files the process may hold open: the soft
// RLIMIT_NOFILE. Go (since 1.19) raises the soft limit to the hard limit
// when the process starts, so this is already as high as the system lets
// the process go. ok is false when the limit cannot be read or is
// unlimited.
func OpenFileLimit() (n int, ok bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	if rl.Cur > math.MaxInt32 { // RLIM_INFINITY among them
		return 0, false
	}
	return int(rl.Cur), true
}
