package inbound

import (
	"bufio"
	"errors"
	"io"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/textproto"

	"github.com/mailroom/mailroom"
)

// What one received message may cost the parser. Anyone can send to the
// return-path MX, so every size is bounded by a constant, not by what the
// message declares: ParseReport reads a stream once, holds at most a few
// of these buffers, and never recurses or loops more than these allow.
const (
	// maxMessageBytes is read at most, whatever the caller bounds (the
	// listener's limit is 10 MiB): a guard against an endless reader.
	maxMessageBytes = 10<<20 + 64<<10
	// maxHeaderBytes bounds the message's header block (Postfix cuts
	// headers at 100 KiB, header_size_limit): every field is held in
	// memory, a few hundred bytes each however short.
	maxHeaderBytes = 128 << 10
	// maxPartHeaderBytes bounds a part's preamble and header block, and
	// the header block of a returned message.
	maxPartHeaderBytes = 64 << 10
	// maxDepth is how deep multiparts are opened: a Gmail DSN, the
	// deepest common report, nests its text three levels down
	// (report, related, alternative).
	maxDepth = 8
	// maxParts is how many body parts are looked at in all.
	maxParts = 100
	// maxScanText is how much of the first text/plain part is read: the
	// report's text comes from it, and a plain-text bounce is read in it.
	maxScanText = 64 << 10
	// maxStatusBytes bounds a delivery-status or feedback-report part.
	maxStatusBytes = 256 << 10
	// maxRecipients bounds the per-recipient blocks of a DSN taken.
	maxRecipients = 1000
)

// ParseReport reads one received message (header and body) and says what
// it is: a delivery status notification (RFC 3464, RFC 6533), a complaint
// (RFC 5965 ARF), an automatic reply (RFC 3834), a plain-text bounce of an
// old MTA, or ReportUnknown for anything else. It is an error only when
// the input is not a message at all (no header field can be read); a
// malformed, truncated or unrecognised message is ReportUnknown, or what
// could be read of it. It never panics, reads at most maxMessageBytes, and
// may leave the rest of r unread.
func ParseReport(r io.Reader) (*mailroom.Report, error) {
	in := &budgetReader{r: io.LimitReader(r, maxMessageBytes), n: maxHeaderBytes}
	br := bufio.NewReader(in)
	h, err := textproto.ReadHeader(br)
	if errors.Is(err, errOverBudget) {
		// Too large a header to be a report of any MTA we know; the
		// fields read so far may stop mid-value and the body is not
		// found. (A header that merely ends badly, at a line with no
		// colon or at the end of the input, is read as far as it goes.)
		return &mailroom.Report{Kind: mailroom.ReportUnknown}, nil
	}
	if h.Len() == 0 {
		// Not wrapped: go-message's error quotes the bad line, which
		// may be as long as the budget.
		return nil, errNotMessage
	}
	in.n = unlimited

	top := message.Header{Header: h}
	mediaType, params := contentType(top)
	w := &walker{}
	w.visit(top, br, 0)

	rep := classify(top, mediaType, params, w)
	rep.Text = cutText(w.text, mailroom.MaxReportText)
	return rep, nil
}

// classify decides the kind of the message from its header and what the
// walk collected.
func classify(h message.Header, mediaType string, params map[string]string, w *walker) *mailroom.Report {
	rep := &mailroom.Report{Kind: mailroom.ReportUnknown}
	if mediaType == "multipart/report" {
		// A report is never an automatic reply, though Postfix,
		// Exchange and Gmail mark their DSNs "Auto-Submitted:
		// auto-replied" (RFC 3834 §5.2).
		// RFC 6522 §3: report-type names the second part; a report
		// without it is read by the part it holds.
		switch strings.ToLower(params["report-type"]) {
		case "delivery-status", "global-delivery-status":
			readDSN(rep, w)
		case "feedback-report":
			readARF(rep, w)
		case "":
			if w.status != nil {
				readDSN(rep, w)
			} else if w.feedback != nil {
				readARF(rep, w)
			}
		}
		return rep
	}
	// A vacation responder's own signals come first: its subject may
	// quote a bounce's ("Automatic reply: Undeliverable: …").
	if isVacation(h) {
		rep.Kind = mailroom.ReportAutoReply
		return rep
	}
	// Old MTAs' plain-text bounces, before Auto-Submitted alone: Exim
	// marks its bounces "Auto-Submitted: auto-replied" too (RFC 3834
	// §5.2), yet they are bounces.
	if looksLikeBounce(h) {
		if rcpts := plainBounce(w.text); len(rcpts) > 0 {
			rep.Kind = mailroom.ReportDSN
			rep.Recipients = rcpts
			return rep
		}
	}
	if isAutoSubmitted(h) {
		rep.Kind = mailroom.ReportAutoReply
	}
	return rep
}

// readDSN fills a DSN's recipients from its delivery-status part (RFC 3464
// §2.3) and the Message-ID of the message it returns; a report from which
// no recipient could be read stays ReportUnknown.
func readDSN(rep *mailroom.Report, w *walker) {
	rep.Recipients = parseDeliveryStatus(w.status)
	if len(rep.Recipients) == 0 {
		rep.Recipients = nil
		return
	}
	rep.Kind = mailroom.ReportDSN
	if w.original != nil {
		rep.OriginalMessageID = messageID(w.original.Get("Message-Id"))
	}
}

// errNotMessage is ParseReport's error for input that starts with no
// header field.
var errNotMessage = errors.New("inbound: not a message: no header field could be read")

// errOverBudget is what a budgetReader says once its budget is spent.
var errOverBudget = errors.New("inbound: header block too large")

const unlimited = -1

// budgetReader reads from r at most n bytes (unlimited when n < 0): set
// before a header block is read and lifted after, it bounds the block
// without bounding the body that follows.
type budgetReader struct {
	r io.Reader
	n int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n < 0 {
		return b.r.Read(p)
	}
	if b.n == 0 {
		return 0, errOverBudget
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}
