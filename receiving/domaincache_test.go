package receiving_test

import (
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/receiving"
	"github.com/mailroom/mailroom/storetest"
)

// A domain's answer at RCPT is reused for CacheFor, then asked again: a
// domain that just became receiving takes mail within it.
func TestAcceptsCachesBriefly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		acct := storetest.NewAccount(t, s, "acme")
		var mu sync.Mutex
		now := time.Now()
		rc := &receiving.Receiver{Store: s, CacheFor: time.Minute, Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
		if ok, err := rc.Accepts(t.Context(), "a@in.acme.example"); ok || err != nil {
			t.Fatalf("before the domain exists: %v, %v", ok, err)
		}
		receivingDomain(t, s, acct, "in.acme.example")
		if ok, _ := rc.Accepts(t.Context(), "a@in.acme.example"); ok {
			t.Error("the answer was not reused within CacheFor")
		}
		mu.Lock()
		now = now.Add(time.Minute + time.Second)
		mu.Unlock()
		if ok, err := rc.Accepts(t.Context(), "b@in.acme.example"); !ok || err != nil {
			t.Errorf("after CacheFor, a receiving domain: %v, %v; want taken", ok, err)
		}
	})
}
