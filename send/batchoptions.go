package send

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/mailroom/mailroom"
)

// BatchOptions are the rules a batch may ask for beyond its items' own.
// /v1's batch asks for neither (docs/api.md "Batch sends": each item
// carries its own key, and each item stands alone); Resend's
// POST /emails/batch asks for both (docs/api.md "Moving from Resend").
type BatchOptions struct {
	// IdempotencyHeader holds the values of the batch's Idempotency-Key
	// header, one per field line (none: no key). The key covers the
	// batch's items: see itemKey.
	IdempotencyHeader []string
	// AllOrNothing stores the batch only if every item is accepted: one
	// refused item refuses the batch, naming it (refusedBatch), and
	// nothing is stored. Resend's x-batch-validation: strict.
	AllOrNothing bool
}

// itemKey is the idempotency key of item i of a batch sent under key.
//
// A batch's key covers its items: a retry of the batch answers the ids
// of the first attempt and sends nothing twice, and another batch under
// the same key is refused (409). The key store holds keys of messages,
// not of batches, so the first item is stored under the batch's key
// itself and each other under the key and its position ("<key>/<i>", as
// the log shows it), each digested as part of its batch (itemDigest): its
// own digest, its position and the batch's size. So a retry of the same
// batch finds every item under its key with its digest, and a batch that
// differs in any item, or in its size, finds at least one item of the
// first batch under a key whose digest is not its own: a batch of a
// different size differs from the first in every item the two have in
// common, whichever is longer. And since the first item holds the key
// itself, a single send and a batch under one key are told apart as two
// different requests, whichever came first (409), never sent both.
func itemKey(key string, i int) string {
	if i == 0 {
		return key
	}
	return key + "/" + strconv.Itoa(i)
}

// itemDigest digests an item as part of a batch of n under a key: the
// item's own digest (its canonical form, or the text its surface
// received), its position and the batch's size.
func itemDigest(req *mailroom.SendRequest, i, n int) []byte {
	h := sha256.New()
	h.Write([]byte("mailroom.batch-item.v1\n"))
	h.Write(req.Digest())
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(i)))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
	return h.Sum(nil)
}

// batchKey reads the batch's key from its header values ("" for none),
// checked as a send's key is and short enough that its items' keys
// (itemKey) fit mailroom.MaxIdempotencyKeyLength.
func batchKey(header []string, n int) (string, error) {
	var v mailroom.Validator
	key := mailroom.ResolveIdempotencyKey(&v, nil, header)
	if err := v.Err(); err != nil {
		return "", err
	}
	if most := mailroom.MaxIdempotencyKeyLength - len(itemKey("", n-1)); key != "" && len(key) > most {
		v.Add("idempotencyKey", "the Idempotency-Key header has %d characters; a batch of %d takes at most %d, for its items are stored under the key and their position (%q)",
			len(key), n, most, itemKey("…", n-1))
		return "", v.Err()
	}
	return key, nil
}

// keyItems gives each item the key and the digest of its place in a batch
// under key (itemKey). An item with a key of its own is refused: the
// batch's key keys it.
func keyItems(key string, items []BatchItem) []BatchItem {
	out := make([]BatchItem, len(items))
	for i, it := range items {
		out[i] = it
		if it.Err != nil {
			continue
		}
		if it.Request.IdempotencyKey != nil {
			var v mailroom.Validator
			v.Add("idempotencyKey", "is not taken on an item of a batch sent with an Idempotency-Key header: the batch's key covers its items")
			out[i].Err = v.Err()
			continue
		}
		r := *it.Request
		k := itemKey(key, i)
		r.IdempotencyKey = &k
		r.SourceDigest = itemDigest(it.Request, i, len(items))
		out[i].Request = &r
	}
	return out
}

// anotherBatch is the answer to a batch under a key that an earlier,
// different batch used: item i was stored before with another digest.
func anotherBatch(i int, cause error) error {
	return &mailroom.Error{Code: mailroom.ECodeIdempotencyKeyReused,
		Message: fmt.Sprintf("The idempotency key was used before with a different batch (its item %d differs, or its size); a batch's key covers all its items, so none of this batch was sent.", i),
		Cause:   cause}
}

// refusedBatch is the answer to an all-or-nothing batch with refused
// items: the first one's error, with its code and details, its message
// saying which item it is and that nothing was stored.
func refusedBatch(out []mailroom.AcceptOutcome) error {
	first, refused := -1, 0
	for i, o := range out {
		if o.Err != nil {
			refused++
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return nil
	}
	others := ""
	if refused > 1 {
		others = fmt.Sprintf(" (%d items were refused in all)", refused)
	}
	e, ok := out[first].Err.(*mailroom.Error)
	if !ok || e.Code == mailroom.ECodeInternal {
		return out[first].Err
	}
	return &mailroom.Error{Code: e.Code, Details: e.Details, RetryAfter: e.RetryAfter, Cause: e.Cause,
		Message: fmt.Sprintf("Item %d of the batch was refused%s, so none of its %d items was sent: %s", first, others, len(out), e.Message)}
}
