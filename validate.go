package mailroom

import "fmt"

// Validator collects every field error of a request so that a client
// learns about all its mistakes in one round trip, not one at a time.
type Validator struct {
	details []FieldError
}

// Add records a problem with field.
func (v *Validator) Add(field, format string, args ...any) {
	v.details = append(v.details, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// AddAt records a problem with one item of a list field.
func (v *Validator) AddAt(field string, index int, format string, args ...any) {
	i := index
	v.details = append(v.details, FieldError{Field: field, Message: fmt.Sprintf(format, args...), Index: &i})
}

// Err returns a validation *Error holding every problem, or nil.
func (v *Validator) Err() error {
	if len(v.details) == 0 {
		return nil
	}
	msg := v.details[0].Field + ": " + v.details[0].Message
	if n := len(v.details) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return &Error{Code: ECodeValidation, Message: msg, Details: v.details}
}
