package http

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// wellFormed refuses, before any route sees it, a request line that could
// be read two ways or that storage could not take:
//
//   - A path that is not in canonical form (an empty segment, or a "." or
//     ".." segment, RFC 3986 §3.3, such as //v1/api-keys or
//     /v1/messages/../api-keys) answers the JSON 404, whatever the method.
//     ServeMux would answer a 307 with HTML pointing at the cleaned path:
//     a JSON client would not expect HTML, and following the redirect would
//     make an odd path an alias of a real route, so that allow-lists and
//     logs keyed on paths could be walked around.
//   - A path whose decoded text holds NUL or is not UTF-8 names nothing: the
//     JSON 404. (PostgreSQL refuses such text in a query, which answered 500.)
//   - A query string that does not parse (a ";" separator, a bad "%"
//     escape), whose names or values hold NUL or are not UTF-8, is 400
//     validation_error: net/url drops such pairs silently, so a filter the
//     client sent would vanish and the unfiltered list come back.
func wellFormed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !canonicalPath(r.URL.EscapedPath()) {
			writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No route %s %s: paths have no empty, \".\" or \"..\" segments.", r.Method, r.URL.Path))
			return
		}
		if !plainText(r.URL.Path) {
			writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No route %s: the path holds NUL or is not UTF-8.", r.Method))
			return
		}
		if err := checkQuery(r.URL.RawQuery); err != nil {
			writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// canonicalPath reports whether the escaped path p is absolute and has no
// empty, "." or ".." segment; a trailing slash is left to the routes, which
// have none. Segments are split on the path's own slashes and then
// decoded, so that %2e%2e is a ".." segment while %2F stays inside its
// segment: an address such as a//b@example.net is one {address}.
func canonicalPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p[1:], "/"), "/") {
		if seg == "" {
			return false
		}
		if dec, err := url.PathUnescape(seg); err != nil || dec == "." || dec == ".." {
			return false
		}
	}
	return true
}

// checkQuery parses the raw query the way handlers will read it, refusing
// what net/url would drop or storage refuse.
func checkQuery(raw string) error {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	var v mailroom.Validator
	if err != nil {
		v.Add("query", "the query string is malformed (a \";\" separator or a bad %% escape); separate parameters with \"&\" and escape \"%%\" as %%25")
		return v.Err()
	}
	for name, values := range q {
		if !plainText(name) {
			v.Add("query", "a parameter name holds NUL or is not UTF-8")
			continue
		}
		for _, value := range values {
			if !plainText(value) {
				v.Add(name, "holds NUL or is not UTF-8")
				break
			}
		}
	}
	return v.Err()
}

// plainText reports UTF-8 without NUL.
func plainText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
