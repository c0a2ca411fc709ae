// Package mustache parses and renders template sources with
// github.com/cbroglie/mustache: the service's TemplateEngine
// (docs/api.md "Templates").
//
// The library is held to the service's rules here: partials are refused
// (it would read them from files in the working directory), values are
// escaped as the Mustache spec's interpolation cases expect (&quot; for
// '"'), and a null renders as nothing rather than "<nil>". Of the spec's
// interpolation, sections, inverted, comments and delimiters cases
// (mustache/spec, 2025-01), the library alone fails six, all for those two
// reasons; with this package it fails none (mustache_test.go holds cases
// of each kind in the project's own words).
package mustache
