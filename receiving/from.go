package receiving

import (
	"errors"
	"strings"

	"github.com/emersion/go-message/mail"
)

// maxScanFields bounds the header fields read for the checks and for
// removing forged Authentication-Results: 1000 is far more than mail
// carries (a long relay chain has a few dozen).
const maxScanFields = 1000

// errFromNotOne: DMARC needs exactly one From domain (RFC 7489 §6.6.1).
var errFromNotOne = errors.New("the message's From is not one address")

// fromDomain is the domain of the message's From (RFC 5322 §3.6.2): ""
// when it has no From field; errFromNotOne when it has several, or one
// with several addresses or none that parses.
func fromDomain(data []byte) (string, error) {
	fields, _, _ := splitHeader(data, maxScanFields)
	var values []string
	for _, f := range fields {
		if strings.EqualFold(f.Name, "From") {
			values = append(values, f.value())
		}
	}
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", errFromNotOne
	}
	addrs, err := mail.ParseAddressList(values[0])
	if err != nil || len(addrs) != 1 {
		return "", errFromNotOne
	}
	at := strings.LastIndexByte(addrs[0].Address, '@')
	if at < 0 || at == len(addrs[0].Address)-1 {
		return "", errFromNotOne
	}
	return strings.ToLower(strings.TrimSuffix(addrs[0].Address[at+1:], ".")), nil
}
