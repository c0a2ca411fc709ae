package tlsrpt

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
	"time"
)

// ReportMailer sends a report message (RFC 8460 §5.3) as Mailroom's own
// mail: the wiring in cmd/mailroom hands it to the accept path of SMTP
// submission, under the account whose verified domain from is on, so
// that it is DKIM-signed, logged and retried as any message.
type ReportMailer interface {
	SendReport(ctx context.Context, from string, to []string, raw []byte) error
}

// reportMessage is the report mail of RFC 8460 §5.3: a multipart/report
// with report-type "tlsrpt", a text part saying what it is, and the
// gzipped report as an attachment of type application/tlsrpt+gzip named
// as §5.1 says; the Subject, TLS-Report-Domain and TLS-Report-Submitter
// fields name the policy domain and the submitter; its Message-ID is the
// report-id.
func reportMessage(r Report, domain, sub, from string, to []string, gz []byte, now time.Time) ([]byte, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	text, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {"text/plain; charset=us-ascii"},
		"Content-Transfer-Encoding": {"7bit"},
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(text, "This is an aggregate TLS report (RFC 8460) from %s for %s,\r\ncovering %s to %s.\r\n",
		sub, domain, r.DateRange.Start.Format(time.RFC3339), r.DateRange.End.Format(time.RFC3339))
	name := r.fileName(sub, domain)
	att, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {mime.FormatMediaType("application/tlsrpt+gzip", map[string]string{"name": name})},
		"Content-Transfer-Encoding": {"base64"},
		"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": name})},
	})
	if err != nil {
		return nil, err
	}
	enc := base64.StdEncoding.EncodeToString(gz)
	for len(enc) > 76 {
		fmt.Fprintf(att, "%s\r\n", enc[:76])
		enc = enc[76:]
	}
	fmt.Fprintf(att, "%s\r\n", enc)
	if err := mw.Close(); err != nil {
		return nil, err
	}

	var msg bytes.Buffer
	header := [][2]string{
		{"From", from},
		{"To", strings.Join(to, ", ")},
		{"Date", now.UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700")},
		{"Subject", fmt.Sprintf("Report Domain: %s Submitter: %s Report-ID: <%s>", domain, sub, r.ReportID)},
		{"Message-ID", "<" + r.ReportID + ">"},
		{"TLS-Report-Domain", domain},
		{"TLS-Report-Submitter", sub},
		{"MIME-Version", "1.0"},
		{"Content-Type", mime.FormatMediaType("multipart/report", map[string]string{"report-type": "tlsrpt", "boundary": mw.Boundary()})},
	}
	for _, f := range header {
		fmt.Fprintf(&msg, "%s: %s\r\n", f[0], f[1])
	}
	msg.WriteString("\r\n")
	msg.Write(body.Bytes())
	return msg.Bytes(), nil
}
