package mailroom

import "fmt"

// MaxDetails is the most entries one validation error lists (docs/api.md "Limits"):
// a request with a million mistakes gets an answer of a hundred lines, and
// the service formats no more than that.
const MaxDetails = 100

// Validator collects every field error of a request so that a client
// learns about all its mistakes in one round trip, not one at a time, up
// to MaxDetails of them.
type Validator struct {
	details []FieldError
	more    int // problems found past MaxDetails, counted, not formatted
}

// Add records a problem with field. String arguments are quoted only in
// part (excerptArgs): they may be the client's whole value.
func (v *Validator) Add(field, format string, args ...any) {
	if v.full() {
		return
	}
	v.details = append(v.details, FieldError{Field: Excerpt(field, MaxFieldName), Message: fmt.Sprintf(format, excerptArgs(args)...)})
}

// AddAt records a problem with one item of a list field.
func (v *Validator) AddAt(field string, index int, format string, args ...any) {
	if v.full() {
		return
	}
	i := index
	v.details = append(v.details, FieldError{Field: Excerpt(field, MaxFieldName), Message: fmt.Sprintf(format, excerptArgs(args)...), Index: &i})
}

// Merge records the problems another Validator found, counting those it
// found past MaxDetails as well.
func (v *Validator) Merge(other *Validator) {
	for _, d := range other.details {
		if !v.full() {
			v.details = append(v.details, d)
		}
	}
	v.more += other.more
}

// full counts a problem that will not be listed.
func (v *Validator) full() bool {
	if len(v.details) < MaxDetails {
		return false
	}
	v.more++
	return true
}

// Err returns a validation *Error holding every problem, or nil. Past
// MaxDetails problems, the last entry says how many more were found, on
// the field of the first of them that it stands for.
func (v *Validator) Err() error {
	if len(v.details) == 0 {
		return nil
	}
	details := v.details
	total := len(details) + v.more
	if v.more > 0 {
		rest := total - (MaxDetails - 1)
		details = append(details[:MaxDetails-1:MaxDetails-1], FieldError{
			Field:   details[MaxDetails-1].Field,
			Message: fmt.Sprintf("and %d more problems were found; only the first %d are listed", rest, MaxDetails-1),
		})
	}
	msg := details[0].Field + ": " + details[0].Message
	if n := total - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return &Error{Code: ECodeValidation, Message: msg, Details: details}
}
