// Package positive is how a setting falls back to its default: a count or
// a duration that is not positive (zero: not set; negative: nothing it
// could mean) is the default. A setting that is a string falls back with
// cmp.Or, for which only "" is unset.
package positive

// Or returns v if it is positive, and def otherwise, as cmp.Or does for
// the zero value.
func Or[T ~int | ~int32 | ~int64 | ~float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
