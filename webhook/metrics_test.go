package webhook

import (
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/storetest"
)

// gauge reads one unlabelled metric's value, or the value with the label
// outcome for attempts, from a registry; ok is false when it is absent.
func metricValue(t *testing.T, reg *prometheus.Registry, name, outcome string) (float64, bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			match := outcome == ""
			for _, l := range m.GetLabel() {
				match = match || (l.GetName() == "outcome" && l.GetValue() == outcome)
			}
			if !match {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue(), true
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue(), true
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

// The metrics count attempts by outcome, time them, and show the backlog
// that storage holds.
func TestMetrics(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(func(n int, rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(500 - 300*min(n, 1)) })
		ep, _ := w.endpoint(rc.URL())
		w.testEvent(ep)
		w.testEvent(ep)

		reg := prometheus.NewRegistry()
		d := w.dispatcher()
		d.Observe = Metrics(reg, w.store, d.Log)
		if v, _ := metricValue(t, reg, "mailroom_webhook_deliveries_pending", ""); v != 2 {
			t.Fatalf("pending %v, want 2", v)
		}
		if _, ok := metricValue(t, reg, "mailroom_webhook_oldest_pending_seconds", ""); !ok {
			t.Fatal("no oldest pending age")
		}
		if v, ok := metricValue(t, reg, "mailroom_webhook_attempts_total", OutcomeTimeout); !ok || v != 0 {
			t.Fatalf("timeouts %v (present %v), want 0 from the start", v, ok)
		}

		w.start(d)
		w.waitAttempts(ep, 2)
		if v, _ := metricValue(t, reg, "mailroom_webhook_attempts_total", OutcomeHTTPError); v != 1 {
			t.Errorf("http errors %v, want 1", v)
		}
		if v, _ := metricValue(t, reg, "mailroom_webhook_attempts_total", OutcomeSucceeded); v != 1 {
			t.Errorf("successes %v, want 1", v)
		}
		if v, _ := metricValue(t, reg, "mailroom_webhook_attempt_seconds", ""); v != 2 {
			t.Errorf("%v attempts timed, want 2", v)
		}
	})
}
