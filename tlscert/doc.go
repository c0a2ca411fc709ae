// Package tlscert provides the HTTPS certificate of `mailroom serve`: either
// a PEM pair the operator names (--tls-cert, --tls-key) or, without one, a
// self-signed certificate made once in the data directory and reused.
//
// The self-signed certificate exists so that the service never listens in
// plain text, not even in --dev: clients trust it explicitly with
// `curl --cacert <data-dir>/tls/cert.pem`, or by its SHA-256 fingerprint,
// which the CLI prints on start.
package tlscert
