package sites

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics registers the per-site gauges on reg (docs/api.md "How mail
// leaves"): mailroom_site_rate, mailroom_site_suspended and
// mailroom_site_connections, labelled by site. They are read from the
// tracker at scrape time, summed over a site's source addresses (suspended
// is 1 when any of its keys is), so a forgotten site drops out of the
// scrape rather than staying at its last value.
func (t *Tracker) Metrics(reg prometheus.Registerer) {
	reg.MustRegister(&collector{t: t,
		rate: prometheus.NewDesc("mailroom_site_rate",
			"Messages a minute this node allows the site now, summed over its source addresses (0: no limit in force).", []string{"site"}, nil),
		suspended: prometheus.NewDesc("mailroom_site_suspended",
			"1 while the site (one of its source addresses) is suspended after repeated throttling.", []string{"site"}, nil),
		connections: prometheus.NewDesc("mailroom_site_connections",
			"SMTP connections this node has open to the site.", []string{"site"}, nil),
	})
}

type collector struct {
	t                            *Tracker
	rate, suspended, connections *prometheus.Desc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rate
	ch <- c.suspended
	ch <- c.connections
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	type site struct {
		rate        float64
		suspended   float64
		connections int
	}
	var order []string
	sites := map[string]*site{}
	for _, st := range c.t.Snapshot() {
		s := sites[st.Site]
		if s == nil {
			s = &site{}
			sites[st.Site] = s
			order = append(order, st.Site)
		}
		s.rate += st.Rate
		s.connections += st.Connections
		if st.SuspendedUntil != nil {
			s.suspended = 1
		}
	}
	for _, name := range order {
		s := sites[name]
		ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, s.rate, name)
		ch <- prometheus.MustNewConstMetric(c.suspended, prometheus.GaugeValue, s.suspended, name)
		ch <- prometheus.MustNewConstMetric(c.connections, prometheus.GaugeValue, float64(s.connections), name)
	}
}
