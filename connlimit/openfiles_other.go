//go:build !unix

package connlimit

// OpenFileLimit is not known outside Unix: ok is false.
func OpenFileLimit() (n int, ok bool) { return 0, false }
