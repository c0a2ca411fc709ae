package http

import (
	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toReceivedSummary shows a received message as GET /v1/received lists
// it: no header fields, bodies or raw bytes.
func toReceivedSummary(m *mailroom.ReceivedMessage) api.ReceivedSummary {
	return api.ReceivedSummary{
		ID: m.ID, From: m.From, To: nonNil(m.To), Cc: nonNil(m.Cc), Subject: m.Subject, MessageID: m.MessageID,
		MailFrom: m.MailFrom, Recipients: nonNil(m.Recipients), ReceivedAt: wireTime(m.ReceivedAt), Size: m.Size,
		Authentication: toReceivedAuthentication(m.Authentication), Attachments: toReceivedAttachments(m.Attachments),
		ParseProblem: optString(m.ParseProblem),
	}
}

// toReceivedMessage shows one received message, parsed (GET
// /v1/received/{id}). A body the message lacks is null, not "", so that
// an empty text part and no text part read differently.
func toReceivedMessage(m *mailroom.ReceivedMessage) api.ReceivedMessage {
	s := toReceivedSummary(m)
	out := api.ReceivedMessage{
		ID: s.ID, From: s.From, To: s.To, Cc: s.Cc, Subject: s.Subject, MessageID: s.MessageID,
		MailFrom: s.MailFrom, Recipients: s.Recipients, ReceivedAt: s.ReceivedAt, Size: s.Size,
		Authentication: s.Authentication, Attachments: s.Attachments, ParseProblem: s.ParseProblem,
		RemoteIP: m.RemoteIP, Helo: m.Helo, Headers: make([]api.ReceivedHeader, len(m.Headers)),
		Text: optString(m.Text), HTML: optString(m.HTML),
	}
	for i, h := range m.Headers {
		out.Headers[i] = api.ReceivedHeader{Name: h.Name, Value: h.Value}
	}
	return out
}

func toReceivedAuthentication(a mailroom.ReceivedAuthentication) api.ReceivedAuthentication {
	out := api.ReceivedAuthentication{SPF: authResult(a.SPF), DKIM: authResult(a.DKIM), DMARC: authResult(a.DMARC),
		DKIMSignatures: make([]api.DKIMSignatureResult, len(a.DKIMSignatures))}
	for i, sig := range a.DKIMSignatures {
		out.DKIMSignatures[i] = api.DKIMSignatureResult{Domain: sig.Domain, Selector: sig.Selector, Result: authResult(sig.Result)}
	}
	return out
}

// authResult shows a stored verdict; one never made (a message stored
// before its checks could run) is none, the RFC 8601 word for "no
// result", rather than "".
func authResult(r mailroom.AuthResult) api.AuthResult {
	if r == "" {
		return api.AuthNone
	}
	return api.AuthResult(r)
}

func toReceivedAttachments(as []mailroom.ReceivedAttachment) []api.ReceivedAttachment {
	out := make([]api.ReceivedAttachment, len(as))
	for i, a := range as {
		out[i] = api.ReceivedAttachment{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size,
			ContentID: optString(a.ContentID)}
	}
	return out
}

// nonNil keeps a list from showing as null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
