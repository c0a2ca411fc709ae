package ratelimit

// Buckets is the number of buckets held, for tests of forgetting.
func (l *Limiter) Buckets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
