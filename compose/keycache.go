package compose

import (
	"crypto"
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/mailroom/mailroom"
)

// parsedKeys keeps the parsed DKIM keys: parsing a PKCS #8 RSA key and its
// CRT precomputation took about 15% of the delivery worker's CPU when it
// was done for every message. Keyed by a digest of the key bytes, so a
// rotated key is a new entry; bounded by the number of sending domains.
var parsedKeys sync.Map // [32]byte → crypto.Signer

// signerFor returns the parsed signer of key, parsing it once.
func signerFor(key mailroom.DKIMKey) (crypto.Signer, error) {
	if key.Domain == "" || key.Selector == "" {
		return nil, fmt.Errorf("compose: DKIM key needs a domain and a selector, have d=%q s=%q", key.Domain, key.Selector)
	}
	id := sha256.Sum256(key.PrivateKeyPKCS8)
	if s, ok := parsedKeys.Load(id); ok {
		return s.(crypto.Signer), nil
	}
	s, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	parsedKeys.Store(id, s)
	return s, nil
}
