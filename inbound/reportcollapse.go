package inbound

import "github.com/mailroom/mailroom"

// What one report may write (docs/api.md "Mail coming back"). A DSN has
// up to maxRecipients per-recipient blocks (RFC 3464 §2.3), and nothing
// stops its writer from naming one recipient in every one of them: applied
// block by block, one report of 1,000 "delayed" blocks wrote 1,000 events,
// each fanned out to every webhook endpoint. So a report's blocks are
// first collapsed to one outcome per recipient of the message, and only
// those are recorded.

// maxReportOutcomes bounds what one report records, whatever it says: one
// outcome per recipient, of which a message has at most
// mailroom.MaxRecipients, so the bound is reached only by a message that
// somehow has more.
const maxReportOutcomes = mailroom.MaxRecipients

// maxReportEvents bounds the events of one type (email.deferred,
// email.bounced, email.complained) that reports leave for one recipient,
// over all reports (RecordReport counts them with the outcome's
// MaxAsync). A delay report changes no state: it only tells that a relay
// further on has not delivered yet, and an MTA sends one or a few
// (Postfix one, after delay_warning_time; Exim at the intervals of its
// delay_warning). A bounce or a complaint changes the state once; reports
// that turn a recipient from bounced to complained and back again tell
// nothing new after the first few. Past the bound, another one is applied
// and written nowhere, so that repeated reports cannot grow a message's
// timeline or its webhook deliveries.
const maxReportEvents = 3

// reportOutcomes collapses a report's outcomes to one per recipient,
// keeping the first recipient's place in the report.
type reportOutcomes struct {
	order []string
	by    map[string]*mailroom.ReportOutcome
}

// add keeps o if it is the first outcome for its recipient, or more severe
// than the one kept (outcomeSeverity); of equal ones, the first written
// wins. A new recipient past maxReportOutcomes is not taken.
func (c *reportOutcomes) add(o *mailroom.ReportOutcome) {
	if c.by == nil {
		c.by = map[string]*mailroom.ReportOutcome{}
	}
	// o.Address is the message's own spelling of the recipient (the
	// block's address matched to it ignoring case), so blocks naming one
	// recipient in any case, or by Final- and Original-Recipient, meet.
	kept, ok := c.by[o.Address]
	switch {
	case !ok && len(c.order) >= maxReportOutcomes:
		return
	case !ok:
		c.order = append(c.order, o.Address)
	case outcomeSeverity(o) <= outcomeSeverity(kept):
		return
	}
	c.by[o.Address] = o
}

// list is the outcomes kept, one per recipient, in the report's order.
func (c *reportOutcomes) list() []*mailroom.ReportOutcome {
	out := make([]*mailroom.ReportOutcome, len(c.order))
	for i, a := range c.order {
		out[i] = c.by[a]
	}
	return out
}

// outcomeSeverity ranks what a block does to its recipient, so that a
// report saying several things of one recipient is taken for the worst:
// a permanent failure that suppresses the address (a hard bounce), then
// any permanent failure (the recipient bounced), then a delay or a
// temporary failure (only an email.deferred). The final state of a
// recipient is what the sender must act on; a delay beside a failure for
// the same recipient is the history of that failure. (Blocks that deliver,
// relay or expand make no outcome at all: dsnOutcome drops them.)
func outcomeSeverity(o *mailroom.ReportOutcome) int {
	switch {
	case o.Suppress != nil:
		return 3
	case o.Status != "":
		return 2
	default:
		return 1
	}
}
