package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailroom/mailroom/client"
)

// The commands that call the HTTPS API (send, messages …) do it through
// the Go client, as any program would: they need a key and the service's
// address, not its storage.

// defaultAPIURL is where `serve --dev` listens (its certificate names
// localhost).
const defaultAPIURL = "https://localhost:8443"

// apiFlags are the flags of every command that calls the API.
type apiFlags struct {
	url     string
	key     string
	dataDir string
	cacert  string
	retries int
}

func (f *apiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", defaultAPIURL, "the service's base `URL`")
	fs.StringVar(&f.key, "key", "", "the API `KEY` (mailroom_…); the environment keeps it out of the process list (required)")
	fs.StringVar(&f.dataDir, "data-dir", "./mailroom-data", "a `DIR` whose tls/cert.pem, when there, is trusted besides the system's CAs (the certificate serve made)")
	fs.StringVar(&f.cacert, "cacert", "", "trust the PEM certificates in `FILE` besides the system's CAs, instead of --data-dir's")
	fs.IntVar(&f.retries, "retries", client.DefaultMaxRetries, "try a 429, a 503 or a network error again up to `N` times, waiting longer each time (0: never)")
}

// newClient returns the client the flags describe: a usage error for a
// missing key or a malformed URL, a failure for a --cacert it cannot use.
func (f *apiFlags) newClient() (*client.Client, error) {
	if f.key == "" {
		return nil, usageError{"no API key: give --key or set " + envName("key")}
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, usageError{fmt.Sprintf("--url %q is not a base URL such as %s", f.url, defaultAPIURL)}
	}
	if f.retries < 0 {
		return nil, usageError{"--retries is 0 or more"}
	}
	roots, err := f.roots()
	if err != nil {
		return nil, failure{err}
	}
	return client.New(f.url, f.key,
		client.WithRootCAs(roots),
		client.WithMaxRetries(f.retries),
		client.WithUserAgent("mailroom-cli/"+shortVersion()+" mailroom-go/"+client.Version)), nil
}

// roots are the system's CAs and the certificates of --cacert, or else of
// --data-dir's tls/cert.pem when it exists.
func (f *apiFlags) roots() (*x509.CertPool, error) {
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	file, named := f.cacert, f.cacert != ""
	if !named {
		file = filepath.Join(f.dataDir, "tls", "cert.pem")
	}
	pem, err := os.ReadFile(file)
	switch {
	case err == nil:
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", file)
		}
	case named:
		return nil, fmt.Errorf("--cacert: %w", err)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the data directory's certificate: %w", err)
	}
	return roots, nil
}

// failure is a failure of a command that calls the API: run prints it
// after the command's name ("mailroom send: …") with exit status 1. An
// answer of the API (*client.Error) is printed as its code, message and
// details.
type failure struct{ err error }

func (e failure) Error() string { return e.err.Error() }
func (e failure) Unwrap() error { return e.err }

// callFailed explains err, the error of a call to the service at base.
func callFailed(err error, base string) error {
	var ae *client.Error
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	var ue *url.Error
	var rh tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.As(err, &ae):
		return failure{ae}
	case errors.Is(err, context.Canceled):
		return failure{errors.New("interrupted")}
	case errors.As(err, &unknown):
		return failure{fmt.Errorf("the certificate of %s is not trusted (%v): run where --data-dir holds the tls/cert.pem that serve made, or give --cacert FILE", base, unknown)}
	case errors.As(err, &hostname):
		return failure{fmt.Errorf("the certificate of %s does not name it (%v): give a --url with a name it has", base, hostname)}
	case errors.As(err, &invalid):
		return failure{fmt.Errorf("the certificate of %s is not valid: %v", base, invalid)}
	case errors.As(err, &rh):
		return failure{fmt.Errorf("%s does not answer TLS: is it https?", base)}
	case errors.As(err, &ue):
		return failure{fmt.Errorf("cannot reach %s: %v", base, ue.Err)}
	case errors.As(err, &ne):
		return failure{fmt.Errorf("cannot reach %s: %v", base, ne)}
	}
	return failure{err}
}

// printFailure writes an API command's failure after its name: the error
// code and message of an API error, and each of its details on a line of
// its own. All of it may be the server's text, so all of it is cleaned.
func printFailure(w io.Writer, name string, err error) {
	var ae *client.Error
	if !errors.As(err, &ae) {
		// A network or decoding error may quote what the server sent.
		fmt.Fprintf(w, "%s: %s\n", name, clean(err.Error()))
		return
	}
	code := clean(ae.Code)
	if code == "" {
		code = fmt.Sprintf("HTTP %d", ae.Status) // not the API's body: a proxy's answer
	}
	fmt.Fprintf(w, "%s: %s: %s", name, code, clean(ae.Message))
	if ae.RequestID != "" {
		fmt.Fprintf(w, " (request %s)", clean(ae.RequestID))
	}
	fmt.Fprintln(w)
	for _, d := range ae.Details {
		field := clean(d.Field)
		if d.Index != nil && !strings.HasSuffix(field, "]") {
			field += fmt.Sprintf("[%d]", *d.Index)
		}
		fmt.Fprintf(w, "  %s: %s\n", field, clean(d.Message))
	}
}

// printJSON writes v as one indented JSON document, HTML as it is.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
