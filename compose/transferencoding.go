package compose

import "strings"

// attachmentBody chooses how an attachment of the given media type
// travels, and returns the media type to write, its
// Content-Transfer-Encoding and the body as it is to be written.
//
// base64 (RFC 2045 §6.8) carries any bytes through any server, and is used
// for every type that allows it. Composite types do not: RFC 2045 §6.4
// allows them only 7bit, 8bit or binary, so that the entities inside stay
// readable without decoding the outer one. Hence:
//
//   - message/rfc822 (RFC 2046 §5.2.1) and other message/* subtypes
//     (§5.2.4) are sent as they are, once their line breaks are CRLF, in
//     7bit. That needs ASCII, lines of at most 998 octets and no NUL (RFC
//     2045 §2.7, §2.8). Not 8bit: a message is signed once for every
//     receiver, and one that does not offer 8BITMIME must not be sent 8-bit
//     data (RFC 6152 §3), nor can signed bytes be downgraded for it.
//     binary is not used: SMTP carries it only with BINARYMIME (RFC 3030).
//     message/partial and message/external-body allow only 7bit anyway
//     (RFC 2046 §5.2.2.1, §5.2.3).
//   - message/global and its kin, message/global-headers,
//     -delivery-status and -disposition-notification, lift the
//     restriction (RFC 6532 §3.5 and §3.7, RFC 6533) and go in base64
//     like any other type.
//   - multipart/* is refused at the API (the multipart structure is
//     Mailroom's); one that arrives here all the same is sent as
//     application/octet-stream, as its boundaries could be read as ours
//     (RFC 2046 §5.1.1) and nothing checks that its body matches them.
//
// A message/* attachment that cannot be sent as it is goes as
// application/octet-stream in base64: its bytes arrive intact, as a file
// to save rather than a message the reader's client opens. Either way no
// composite entity is ever base64.
func attachmentBody(contentType string, content []byte) (mediaType, cte string, body []byte) {
	top, _, _ := strings.Cut(contentType, ";")
	top = strings.ToLower(strings.TrimSpace(top))
	switch {
	case strings.HasPrefix(top, "multipart/"):
		return octetStream, "base64", content
	case top == "message/global" || strings.HasPrefix(top, "message/global-"):
		return contentType, "base64", content
	case strings.HasPrefix(top, "message/"):
		if b, cte, ok := unencoded(content, false); ok {
			return contentType, cte, b
		}
		return octetStream, "base64", content
	}
	return contentType, "base64", content
}

// unencoded returns content with every line break (CRLF, bare LF or bare
// CR) made CRLF, as RFC 5322 §2.3 requires, and the identity encoding it
// can be sent with: "7bit" when it is ASCII, "8bit" when it is not and
// allow8bit is set. ok is false when it cannot be sent unencoded: a NUL, a
// line longer than 998 octets (RFC 2045 §2.7, §2.8), or 8-bit bytes where
// only 7bit is allowed.
func unencoded(content []byte, allow8bit bool) (body []byte, cte string, ok bool) {
	out := make([]byte, 0, len(content)+len(content)/32)
	eightBit, line := false, 0
	for i := 0; i < len(content); i++ {
		switch c := content[i]; {
		case c == 0:
			return nil, "", false
		case c == '\r' || c == '\n':
			if c == '\r' && i+1 < len(content) && content[i+1] == '\n' {
				i++
			}
			out = append(out, '\r', '\n')
			line = 0
		default:
			if line++; line > maxLine {
				return nil, "", false
			}
			eightBit = eightBit || c >= 0x80
			out = append(out, c)
		}
	}
	switch {
	case !eightBit:
		return out, "7bit", true
	case allow8bit:
		return out, "8bit", true
	}
	return nil, "", false
}
