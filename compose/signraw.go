package compose

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/mailroom/mailroom"
)

// SignRaw DKIM-signs a message as a client wrote it, for SMTP submission
// (docs/api.md "SMTP submission"), which takes messages whole instead of
// composing them from fields. raw must have CRLF line endings and end its
// header with an empty line; it comes back unchanged behind a
// DKIM-Signature field.
//
// The signature is the one Compose and Copies make (one per key: RSA, and
// Ed25519 beside it when the key has Also): rsa-sha256 or ed25519-sha256,
// relaxed/relaxed (RFC 6376 §3.4.2, §3.4.4), over the fields of
// signedHeaders the message has, From over-signed (§5.4.2, §8.15). It is
// made with Copies' signer, which hashes the body once as it lies in raw
// (no copy of a 16 MiB message through a MIME reader); t= is the time of
// signing, not the client's Date, which may be far off (a verifier may
// refuse a t= in the future).
func (c Composer) SignRaw(raw []byte, key mailroom.DKIMKey) ([]byte, error) {
	signers, err := signersFor(key)
	if err != nil {
		return nil, err
	}
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, fmt.Errorf("compose: message has no end of header")
	}
	header, err := readFields(raw[:end+4])
	if err != nil {
		return nil, err
	}
	bh := relaxedBodyHash(raw[end+4:])
	stamp := strconv.FormatInt(c.now().Unix(), 10)
	var sigs []byte
	for _, ks := range signers {
		tags := "v=1; a=" + algorithm(ks.signer) + "; c=relaxed/relaxed; d=" + ks.key.Domain + "; s=" + ks.key.Selector +
			"; t=" + stamp + "; bh=" + base64.StdEncoding.EncodeToString(bh[:])
		sig, err := signFields(header, signedNamesOf(header), tags, ks.signer)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig...)
	}
	out := make([]byte, 0, len(sigs)+len(raw))
	return append(append(out, sigs...), raw...), nil
}

var _ mailroom.RawSigner = Composer{}
