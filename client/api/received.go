package api

import "time"

// AuthResult is one verdict of the checks a receiver makes (docs/api.md
// "Receiving mail"), an RFC 8601 §2.7 result word.
type AuthResult string

const (
	AuthPass      AuthResult = "pass"
	AuthFail      AuthResult = "fail"
	AuthSoftFail  AuthResult = "softfail"
	AuthNeutral   AuthResult = "neutral"
	AuthNone      AuthResult = "none"
	AuthTempError AuthResult = "temperror"
	AuthPermError AuthResult = "permerror"
)

// AuthResults returns every verdict, in the order of the API reference.
func AuthResults() []AuthResult {
	return []AuthResult{AuthPass, AuthFail, AuthSoftFail, AuthNeutral, AuthNone, AuthTempError, AuthPermError}
}

// DKIMSignatureResult is the verdict of one DKIM-Signature of a received
// message (OpenAPI schema DkimSignatureResult).
type DKIMSignatureResult struct {
	Domain   string     `json:"domain"`
	Selector string     `json:"selector"`
	Result   AuthResult `json:"result"`
}

// ReceivedAuthentication are a received message's verdicts (OpenAPI
// schema ReceivedAuthentication): SPF for the envelope sender, DKIM the
// best of its signatures (each in DKIMSignatures, never null), DMARC for
// the From domain.
type ReceivedAuthentication struct {
	SPF            AuthResult            `json:"spf"`
	DKIM           AuthResult            `json:"dkim"`
	DMARC          AuthResult            `json:"dmarc"`
	DKIMSignatures []DKIMSignatureResult `json:"dkimSignatures"`
}

// ReceivedAttachment is an attachment's metadata (OpenAPI schema
// ReceivedAttachment); its bytes are GET
// /v1/received/{id}/attachments/{attachmentId}'s. Size is in decoded
// bytes; ContentID (without <>) is null unless the part has one.
type ReceivedAttachment struct {
	ID          string  `json:"id"`
	Filename    string  `json:"filename"`
	ContentType string  `json:"contentType"`
	Size        int64   `json:"size"`
	ContentID   *string `json:"contentId"`
}

// ReceivedHeader is one header field of a received message, in order.
type ReceivedHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ReceivedSummary is a received message as GET /v1/received lists it
// (OpenAPI schema ReceivedSummary): without its header fields and bodies.
type ReceivedSummary struct {
	ID string `json:"id"`
	// From, To, Cc, Subject and MessageID are the header's; the lists
	// are never null.
	From      string   `json:"from"`
	To        []string `json:"to"`
	Cc        []string `json:"cc"`
	Subject   string   `json:"subject"`
	MessageID string   `json:"messageId"`
	// MailFrom is the envelope sender ("" for the null sender <>);
	// Recipients the envelope recipients at the account's receiving
	// domains, as the sender gave them.
	MailFrom       string                 `json:"mailFrom"`
	Recipients     []string               `json:"recipients"`
	ReceivedAt     time.Time              `json:"receivedAt"`
	Size           int64                  `json:"size"`
	Authentication ReceivedAuthentication `json:"authentication"`
	Attachments    []ReceivedAttachment   `json:"attachments"`
	// ParseProblem says what of the message could not be parsed; null
	// when all of it was.
	ParseProblem *string `json:"parseProblem"`
}

// ReceivedMessage is one received message, parsed (OpenAPI schema
// ReceivedMessage): GET /v1/received/{id}. Text and HTML are null when
// the message has no such body.
type ReceivedMessage struct {
	ID             string                 `json:"id"`
	From           string                 `json:"from"`
	To             []string               `json:"to"`
	Cc             []string               `json:"cc"`
	Subject        string                 `json:"subject"`
	MessageID      string                 `json:"messageId"`
	MailFrom       string                 `json:"mailFrom"`
	Recipients     []string               `json:"recipients"`
	ReceivedAt     time.Time              `json:"receivedAt"`
	Size           int64                  `json:"size"`
	Authentication ReceivedAuthentication `json:"authentication"`
	Attachments    []ReceivedAttachment   `json:"attachments"`
	ParseProblem   *string                `json:"parseProblem"`
	// RemoteIP and Helo are the sending client's address and EHLO name.
	RemoteIP string           `json:"remoteIp"`
	Helo     string           `json:"helo"`
	Headers  []ReceivedHeader `json:"headers"`
	Text     *string          `json:"text"`
	HTML     *string          `json:"html"`
}

// ReceivedEventData is the data of an email.received event (docs/api.md
// "Receiving mail"): the message's id (GET /v1/received/{id} reads the
// rest), its header's From, To, Cc, Subject and Message-ID, the envelope
// recipients, when it came, the verdicts and the attachments' metadata.
type ReceivedEventData struct {
	ReceivedID     string                 `json:"receivedId"`
	From           string                 `json:"from"`
	To             []string               `json:"to"`
	Cc             []string               `json:"cc"`
	Recipients     []string               `json:"recipients"`
	Subject        string                 `json:"subject"`
	MessageID      string                 `json:"messageId"`
	ReceivedAt     time.Time              `json:"receivedAt"`
	Authentication ReceivedAuthentication `json:"authentication"`
	Attachments    []ReceivedAttachment   `json:"attachments"`
}

// emailReceived is the type of the event ReceivedEventData is the data of.
const emailReceived EventType = "email.received"

func isReceivedEvent(t EventType) bool { return t == emailReceived }

// ReceivedData decodes the data of an email.received event.
func (e *Event) ReceivedData() (*ReceivedEventData, error) {
	return decodeData[ReceivedEventData](e.Type, e.Data, isReceivedEvent)
}

// ReceivedData decodes the data of an email.received event.
func (e *EventRecord) ReceivedData() (*ReceivedEventData, error) {
	return decodeData[ReceivedEventData](e.Type, e.Data, isReceivedEvent)
}
