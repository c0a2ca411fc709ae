package mailroom

import (
	"encoding/base64"
	"fmt"
	"mime"
	"path"
	"strings"
	"unicode/utf8"
)

// Limits of attachments (docs/api.md "Limits").
const (
	MaxAttachmentBytes    = 10 << 20 // decoded, all attachments of a message together
	MaxAttachments        = 100      // per message
	maxFilenameLength     = 255      // octets, the common file-system limit
	maxContentIDLength    = 100
	defaultAttachmentType = "application/octet-stream"
)

// validateAttachments decodes and checks the attachments. A problem with
// one attachment is reported on the field "attachments" at its index, the
// message naming the member ("filename …", "content …"); the size limit,
// which concerns them all, without an index.
func validateAttachments(v *Validator, list []SendAttachment) []Attachment {
	if len(list) > MaxAttachments {
		v.Add("attachments", "has %d attachments; at most %d are allowed per message", len(list), MaxAttachments)
		return nil
	}
	var out []Attachment
	total := 0
	contentIDs := map[string]int{}
	for i, in := range list {
		a, ok := Attachment{Filename: in.Filename, ContentID: in.ContentID}, true
		if msg := checkFilename(in.Filename); msg != "" {
			v.AddAt("attachments", i, "filename %s", msg)
			ok = false
		}
		content, msg := decodeBase64Content(in.Content)
		if msg != "" {
			v.AddAt("attachments", i, "content %s", msg)
			ok = false
		}
		a.Content = content
		total += len(content)
		if a.ContentType, msg = attachmentContentType(in.ContentType, in.Filename); msg != "" {
			v.AddAt("attachments", i, "contentType %s", msg)
			ok = false
		}
		if in.ContentID != "" {
			if msg := checkContentID(in.ContentID); msg != "" {
				v.AddAt("attachments", i, "contentId %s", msg)
				ok = false
			} else if j, dup := contentIDs[in.ContentID]; dup {
				v.AddAt("attachments", i, "contentId %q is already used by attachments[%d]; each inline part needs its own", in.ContentID, j)
				ok = false
			} else {
				contentIDs[in.ContentID] = i
			}
		}
		if ok {
			out = append(out, a)
		}
	}
	if total > MaxAttachmentBytes {
		v.Add("attachments", "add up to %d bytes once decoded; at most %d (10 MiB) are allowed per message", total, MaxAttachmentBytes)
	}
	return out
}

// checkFilename refuses what could break the Content-Disposition header
// or be taken for a path by the receiver's mail client.
func checkFilename(name string) string {
	if name == "" {
		return `is required, for example "invoice.pdf"`
	}
	if msg := checkHeaderText(name); msg != "" {
		return msg
	}
	if msg := checkDisplayedText(name); msg != "" {
		return msg
	}
	switch {
	case len(name) > maxFilenameLength:
		return fmt.Sprintf("has %d octets; at most %d are allowed", len(name), maxFilenameLength)
	case strings.ContainsAny(name, `/\`):
		return `must be a plain file name, without "/" or "\"`
	case name == "." || name == "..":
		return fmt.Sprintf("%q is not a file name", name)
	}
	return ""
}

// decodeBase64Content decodes standard base64 (RFC 4648 §4), with or
// without padding. Line breaks are ignored, as encoding/base64 does, so
// that the output of MIME-style encoders (76-character lines) is accepted;
// any other character outside the alphabet is an error.
func decodeBase64Content(s string) ([]byte, string) {
	if s == "" {
		return nil, "is required: the file's bytes in base64"
	}
	enc := base64.StdEncoding
	if !strings.Contains(s, "=") {
		enc = base64.RawStdEncoding
	}
	b, err := enc.DecodeString(s)
	if err == nil {
		return b, ""
	}
	if strings.ContainsAny(s, "-_") {
		return nil, `is not standard base64: it has "-" or "_", which are URL-safe base64; encode with the standard alphabet ("+" and "/")`
	}
	if e, ok := err.(base64.CorruptInputError); ok {
		return nil, fmt.Sprintf("is not valid base64 (a problem at character %d)", int64(e)+1)
	}
	return nil, "is not valid base64"
}

// attachmentContentType returns the media type to send: the one given,
// normalised, or one inferred from the file name's extension.
func attachmentContentType(given, filename string) (string, string) {
	if given == "" {
		if t := mime.TypeByExtension(path.Ext(filename)); t != "" {
			return t, ""
		}
		return defaultAttachmentType, ""
	}
	if msg := checkHeaderText(given); msg != "" {
		return "", msg
	}
	mediaType, params, err := mime.ParseMediaType(given)
	if err != nil {
		return "", fmt.Sprintf("%q is not a media type such as \"application/pdf\" (RFC 2045 §5.1)", given)
	}
	if !strings.Contains(mediaType, "/") {
		return "", fmt.Sprintf("%q needs a type and a subtype, such as \"application/pdf\"", given)
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		return "", fmt.Sprintf("%q cannot be an attachment's type: Mailroom writes the multipart structure", given)
	}
	// ParseMediaType has decoded RFC 2231 parameters (name*=utf-8''%0D%0A…):
	// what a reader will decode is checked, not what was written.
	for name, value := range params {
		if msg := checkHeaderText(value); msg != "" {
			return "", fmt.Sprintf("parameter %q %s", name, msg)
		}
		if msg := checkDisplayedText(value); msg != "" {
			return "", fmt.Sprintf("parameter %q %s", name, msg)
		}
	}
	// The content is sent as the bytes given, in base64 or as it is; the
	// MIME writer labels a leaf only utf-8 or us-ascii. Any other charset
	// was accepted and then made the message impossible to compose.
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return "", fmt.Sprintf("charset %q is not supported: declare utf-8 or us-ascii, or leave charset out", cs)
	}
	if t := mime.FormatMediaType(mediaType, params); t != "" {
		return t, ""
	}
	return "", fmt.Sprintf("%q is not a valid media type", given)
}

// checkDisplayedText refuses text that a mail client would show other
// than as written: invalid UTF-8, and the bidirectional controls (Unicode
// TR #9 §2: embeddings, overrides, isolates, marks) with which
// "invoice\u202Efdp.exe" reads as "invoiceexe.pdf".
func checkDisplayedText(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if isBidiControl(r) {
			return fmt.Sprintf("must not contain the bidirectional control %U: it makes the text read as something else", r)
		}
	}
	return ""
}

// isBidiControl reports the characters of Unicode's Bidi_Control property.
func isBidiControl(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// checkContentID allows the characters that can stand in "cid:" URLs and
// between the angle brackets of Content-ID (RFC 2392) without escaping.
func checkContentID(id string) string {
	if n := utf8.RuneCountInString(id); n > maxContentIDLength {
		return fmt.Sprintf("has %d characters; at most %d are allowed", n, maxContentIDLength)
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._@-", r)) {
			return fmt.Sprintf(`%q may contain only letters, digits, ".", "_", "@" and "-" (no angle brackets: Mailroom adds them)`, id)
		}
	}
	return ""
}
