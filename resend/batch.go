package resend

import (
	"strings"

	"github.com/mailroom/mailroom"
)

// MaxBatchEmails is the most emails one POST /emails/batch holds: Resend's
// limit (https://resend.com/docs/api-reference/emails/send-batch-emails),
// below Mailroom's own (mailroom.MaxBatchMessages), so that what works
// here works on Resend.
const MaxBatchEmails = 100

// SendResult answers POST /emails, and is one accepted email of a batch.
type SendResult struct {
	ID string `json:"id"`
}

// BatchResult answers POST /emails/batch: data holds the accepted emails
// in the order sent (under strict validation, all of them); errors, under
// permissive validation only, the refused ones by their index.
type BatchResult struct {
	Data   []SendResult `json:"data"`
	Errors []BatchError `json:"errors,omitempty"`
}

// BatchError is one refused email of a permissive batch.
type BatchError struct {
	Index   int    `json:"index"`
	Message string `json:"message"`
}

// Permissive reads the x-batch-validation header: "strict" (all or
// nothing, the default when absent) or "permissive" (each email on its
// own). Anything else is a validation error naming both.
func Permissive(header []string) (bool, error) {
	var v mailroom.Validator
	switch {
	case len(header) > 1:
		v.Add("x-batch-validation", "is given %d times; give it once, strict or permissive", len(header))
	case len(header) == 0 || strings.EqualFold(header[0], "strict"):
		return false, nil
	case strings.EqualFold(header[0], "permissive"):
		return true, nil
	default:
		v.Add("x-batch-validation", "%q is not a validation mode: give strict (the default: all emails or none) or permissive (each email on its own)", header[0])
	}
	return false, v.Err()
}

// CheckBatchSize refuses a batch of no email or of more than
// MaxBatchEmails; n is how many were read, at most one past the limit.
func CheckBatchSize(n int) error {
	var v mailroom.Validator
	switch {
	case n == 0:
		v.Add("emails", "the batch is empty: give 1 to %d emails, as a JSON array", MaxBatchEmails)
	case n > MaxBatchEmails:
		v.Add("emails", "the batch has more than %d emails; a batch holds 1 to %d", MaxBatchEmails, MaxBatchEmails)
	}
	return v.Err()
}
