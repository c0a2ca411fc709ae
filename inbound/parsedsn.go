package inbound

import (
	"strings"

	"github.com/mailroom/mailroom"
)

// parseDeliveryStatus reads the per-recipient blocks of a
// message/delivery-status part (RFC 3464 §2.3). The per-message block
// (§2.2) and any block naming no recipient are skipped; a truncated part
// keeps the blocks before the cut (the last one as far as it goes).
func parseDeliveryStatus(b []byte) []mailroom.ReportRecipient {
	if len(b) == 0 {
		return nil
	}
	var out []mailroom.ReportRecipient
	for _, blk := range parseFieldBlocks(b, maxRecipients+1) {
		if len(out) == maxRecipients {
			break
		}
		rr := mailroom.ReportRecipient{
			FinalRecipient:    reportAddress(blk.get("final-recipient")),
			OriginalRecipient: reportAddress(blk.get("original-recipient")),
			Action:            actionValue(blk.get("action")),
			DiagnosticCode:    cleanValue(stripType(blk.get("diagnostic-code"))),
			RemoteMTA:         cleanValue(stripType(blk.get("remote-mta"))),
		}
		if rr.FinalRecipient == "" && rr.OriginalRecipient == "" {
			continue
		}
		rr.Status = statusCode(blk.get("status"), rr.DiagnosticCode)
		out = append(out, rr)
	}
	return out
}

// actionValue is an Action field's action-value (RFC 3464 §2.3.3),
// lower-case, without the comment some MTAs add ("failed (bad address)").
func actionValue(v string) string {
	f := strings.Fields(v)
	if len(f) == 0 {
		return ""
	}
	return cleanValue(strings.ToLower(f[0]))
}

// statusCode is the status code of a Status field (RFC 3464 §2.3.4,
// RFC 3463), without the text some MTAs add ("5.0.0 (permanent
// failure)"). When the field has none, the Diagnostic-Code's enhanced
// code, or the class of its reply code ("550 …" → 5.0.0), stands in.
func statusCode(status, diag string) string {
	if c := mailroom.EnhancedCode(status); c != "" {
		return c
	}
	return replyStatus(diag)
}

// replyStatus is the enhanced status code an SMTP reply text carries, or
// the class of its reply code (RFC 3463 §3.1: X.0.0) when it carries none;
// "" when it starts with neither.
func replyStatus(reply string) string {
	reply = strings.TrimSpace(reply)
	code := leadingReplyCode(reply)
	if c := mailroom.EnhancedCode(reply); c != "" && (code == "" || c[0] == code[0]) {
		return c
	}
	if code == "" {
		return ""
	}
	return code[:1] + ".0.0"
}

// leadingReplyCode is the 4xx or 5xx reply code (RFC 5321 §4.2) that s
// starts with, followed by a space, a hyphen or its end, or "".
func leadingReplyCode(s string) string {
	if len(s) < 3 || (s[0] != '4' && s[0] != '5') || !isDigit(s[1]) || !isDigit(s[2]) {
		return ""
	}
	if len(s) > 3 && s[3] != ' ' && s[3] != '-' {
		return ""
	}
	return s[:3]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
