package smtp

import (
	"strconv"
	"testing"
	"time"
)

func TestTLSMemoryForgetsAfterItsTime(t *testing.T) {
	m := newTLSMemory(time.Hour, 10)
	now := time.Now()
	m.now = func() time.Time { return now }

	m.remember("192.0.2.1:25")
	if !m.failed("192.0.2.1:25") {
		t.Fatal("a failure just recorded is not remembered")
	}
	if m.failed("192.0.2.1:587") || m.failed("192.0.2.2:25") {
		t.Fatal("a failure is remembered for another address")
	}
	now = now.Add(time.Hour - time.Second)
	if !m.failed("192.0.2.1:25") {
		t.Fatal("the failure is forgotten before its time")
	}
	now = now.Add(time.Second)
	if m.failed("192.0.2.1:25") {
		t.Fatal("the failure is remembered after its time")
	}
}

func TestTLSMemoryIsBounded(t *testing.T) {
	const max = 8
	m := newTLSMemory(time.Hour, max)
	now := time.Now()
	m.now = func() time.Time { return now }

	for i := range 3 * max {
		m.remember("192.0.2." + strconv.Itoa(i) + ":25")
		now = now.Add(time.Minute)
		if len(m.until) > max {
			t.Fatalf("%d addresses remembered, want at most %d", len(m.until), max)
		}
	}
	// The newest stay; the oldest, closest to being forgotten, went.
	if !m.failed("192.0.2." + strconv.Itoa(3*max-1) + ":25") {
		t.Error("the newest failure was evicted")
	}
	if m.failed("192.0.2.0:25") {
		t.Error("the oldest failure was kept")
	}
}
