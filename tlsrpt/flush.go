package tlsrpt

import (
	"context"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// flushTimeout bounds the last flush, when Run's context has ended.
const flushTimeout = 10 * time.Second

// Run flushes the counts every FlushEvery until ctx ends, then once more
// (with a context of its own, bounded by flushTimeout), so that a node
// stopping in order loses none of its counts.
func (c *Collector) Run(ctx context.Context) {
	if c.opts.Store == nil {
		return
	}
	t := time.NewTicker(c.opts.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			defer cancel()
			if err := c.Flush(last); err != nil {
				c.opts.Log.Error("TLS report counts of this node were lost at shutdown: the store did not take them", "err", err)
			}
			return
		case <-t.C:
			if err := c.Flush(ctx); err != nil {
				c.opts.Log.Warn("could not write TLS report counts; keeping them for the next flush", "err", err)
			}
		}
	}
}

// Flush writes the counts held so far to the store and forgets them. When
// the store fails they are held again, to be written at the next flush.
func (c *Collector) Flush(ctx context.Context) error {
	if c.opts.Store == nil {
		return nil
	}
	c.mu.Lock()
	pending, dropped := c.pending, c.dropped
	c.reset()
	c.dropped = 0
	c.mu.Unlock()
	if dropped > 0 {
		c.opts.Log.Warn("TLS sessions left out of TLS reports: more recipient domains than a flush holds",
			"sessions", dropped, "maxDomains", c.opts.MaxDomains)
	}
	if len(pending) == 0 {
		return nil
	}
	counts := make([]mailroom.TLSReportCount, 0, len(pending))
	for k, n := range pending {
		start := time.Unix(0, k.start).UTC()
		counts = append(counts, mailroom.TLSReportCount{
			Window:       mailroom.TLSReportWindow{Start: start, End: start.Add(c.opts.Interval), Domain: k.domain},
			PolicyType:   k.typ,
			PolicyString: splitNonEmpty(k.lines),
			MXHost:       splitNonEmpty(k.mx),
			Detail: mailroom.TLSReportDetail{ResultType: k.detail.result, SendingIP: k.detail.sendingIP,
				ReceivingMX: k.detail.receivingMX, ReceivingIP: k.detail.receivingIP, FailureReason: k.detail.reason, Count: n},
		})
	}
	if err := c.opts.Store.AddTLSReportCounts(ctx, counts); err != nil {
		c.mu.Lock()
		for k, n := range pending {
			c.pending[k] += n
			c.domains[k.domainKey] = true
		}
		c.mu.Unlock()
		return err
	}
	return nil
}

func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
