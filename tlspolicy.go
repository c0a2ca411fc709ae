package mailroom

import (
	"crypto/tls"
	"time"
)

// TLSMode is a sending domain's requirement of the TLS its mail leaves
// over (docs/api.md "How mail leaves", "TLS policy"), as Resend's domain
// `tls` setting is.
type TLSMode string

const (
	// TLSOpportunistic (the default): STARTTLS whenever the receiver
	// offers it, the mail in clear when it does not or its TLS fails
	// (RFC 7435), unless another policy requires TLS.
	TLSOpportunistic TLSMode = "opportunistic"
	// TLSEnforced: every delivery from the domain needs STARTTLS with a
	// certificate valid for the MX host's name; else it is deferred
	// (DeferTLSRequired) and fails after the retry window.
	TLSEnforced TLSMode = "enforced"
)

// ParseTLSMode reads a domain's `tls` as the API gives it; "" is not a mode.
func ParseTLSMode(s string) (TLSMode, bool) {
	switch m := TLSMode(s); m {
	case TLSOpportunistic, TLSEnforced:
		return m, true
	}
	return "", false
}

// OrDefault is m, or TLSOpportunistic when unset (a domain stored before
// the setting existed).
func (m TLSMode) OrDefault() TLSMode {
	if m == "" {
		return TLSOpportunistic
	}
	return m
}

// TLSPolicy names the policy an attempt's session was made under: of those
// that apply to a delivery, the strongest wins (TLSPolicyFor).
type TLSPolicy string

const (
	// TLSPolicyRequireTLS: the send asked for REQUIRETLS (RFC 8689): an MX
	// validated by MTA-STS, verified TLS, a host that advertises
	// REQUIRETLS; else the mail bounces with 5.7.30.
	TLSPolicyRequireTLS TLSPolicy = "requiretls"
	// TLSPolicyMTASTS: the recipient domain publishes an MTA-STS policy
	// (RFC 8461). In enforce mode only its MX hosts, over verified TLS;
	// in testing mode failures are recorded and the mail goes as usual.
	TLSPolicyMTASTS TLSPolicy = "mta-sts"
	// TLSPolicyEnforced: the sending domain's tls is TLSEnforced.
	TLSPolicyEnforced TLSPolicy = "enforced"
	// TLSPolicyOpportunistic: no policy requires TLS.
	TLSPolicyOpportunistic TLSPolicy = "opportunistic"
)

// TLSPolicies lists every policy, for metrics.
var TLSPolicies = []TLSPolicy{TLSPolicyRequireTLS, TLSPolicyMTASTS, TLSPolicyEnforced, TLSPolicyOpportunistic}

// TLSRequirement is what one delivery demands of its sessions' TLS, the
// strongest policy that applies deciding (docs/api.md "TLS policy").
type TLSRequirement struct {
	// Policy is the policy in force, named in each attempt's TLSInfo.
	Policy TLSPolicy
	// Verified: only over STARTTLS with a certificate valid for the MX
	// host's name; never in clear, and no plaintext retry after a failed
	// handshake.
	Verified bool
	// MX, when set, says which MX host names may be used at all (an
	// enforced MTA-STS policy's; a REQUIRETLS delivery's).
	MX func(host string) bool
	// RequireTLS: the host must advertise REQUIRETLS and MAIL FROM carries
	// it (RFC 8689 §4.2.1); where no host qualifies the mail bounces with
	// 5.7.30 rather than waits.
	RequireTLS bool
	// STS is the recipient domain's MTA-STS policy, whatever its mode; nil
	// when it publishes none. In testing mode it requires nothing, but its
	// failures are reported (TLS-RPT, RFC 8460).
	STS *MTASTSPolicy
}

// TLSRequirementFor is the requirement of a delivery: requireTls (the
// send's), the sending domain's mode, and the recipient domain's MTA-STS
// policy (nil when it has none). REQUIRETLS is the strongest, then an
// enforced MTA-STS policy, then an enforced sending domain; otherwise
// TLS is opportunistic (with a testing MTA-STS policy, its failures are
// recorded). A REQUIRETLS delivery whose recipient domain has no enforced
// MTA-STS policy has no validated MX (RFC 8689 §4.2.1: MTA-STS or DNSSEC;
// Mailroom does not validate DNSSEC): its MX accepts no host, and the mail
// bounces.
func TLSRequirementFor(requireTLS bool, mode TLSMode, sts *MTASTSPolicy) TLSRequirement {
	enforce := sts != nil && sts.Mode == MTASTSEnforce
	switch {
	case requireTLS:
		r := TLSRequirement{Policy: TLSPolicyRequireTLS, Verified: true, RequireTLS: true, STS: sts,
			MX: func(string) bool { return false }}
		if enforce {
			r.MX = sts.MatchesMX
		}
		return r
	case enforce:
		return TLSRequirement{Policy: TLSPolicyMTASTS, Verified: true, MX: sts.MatchesMX, STS: sts}
	case mode == TLSEnforced:
		return TLSRequirement{Policy: TLSPolicyEnforced, Verified: true, STS: sts}
	case sts != nil && sts.Mode == MTASTSTesting:
		return TLSRequirement{Policy: TLSPolicyMTASTS, STS: sts}
	}
	return TLSRequirement{Policy: TLSPolicyOpportunistic, STS: sts}
}

// TLSInfo is the TLS an attempt's session ran under, or nil in clear
// (docs/api.md "TLS policy"): in the log, email.delivered data and the
// dashboard.
type TLSInfo struct {
	// Version is "TLS1.0" … "TLS1.3" (TLSVersionName).
	Version string `json:"version"`
	// Cipher is the cipher suite's IANA name (tls.CipherSuiteName).
	Cipher string `json:"cipher"`
	// Verified says the certificate chains to a trusted root (the
	// system's, SSL_CERT_FILE, SSL_CERT_DIR) and is valid for the MX
	// host's name (RFC 8461 §4.2, RFC 6125).
	Verified bool `json:"verified"`
	// Policy is the policy the session was made under.
	Policy TLSPolicy `json:"policy"`
}

// NewTLSInfo describes a session's TLS state under policy.
func NewTLSInfo(s tls.ConnectionState, verified bool, policy TLSPolicy) *TLSInfo {
	return &TLSInfo{Version: TLSVersionName(s.Version), Cipher: tls.CipherSuiteName(s.CipherSuite),
		Verified: verified, Policy: policy}
}

// TLSVersionName names a TLS version as the log shows it ("TLS1.3").
func TLSVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLS1.0"
	case tls.VersionTLS11:
		return "TLS1.1"
	case tls.VersionTLS12:
		return "TLS1.2"
	case tls.VersionTLS13:
		return "TLS1.3"
	}
	return tls.VersionName(v)
}

// RequireTLSBounce is the enhanced status code of mail that asked for
// REQUIRETLS and found no path that qualifies (RFC 8689 §5; RFC 3463
// registry: "REQUIRETLS support required").
const RequireTLSBounce = "5.7.30"

// TLS-RPT result types (RFC 8460 §4.3), also the failure a session result
// names. "" is a success.
type TLSFailure string

const (
	TLSFailStartTLSNotSupported    TLSFailure = "starttls-not-supported"
	TLSFailCertificateHostMismatch TLSFailure = "certificate-host-mismatch"
	TLSFailCertificateExpired      TLSFailure = "certificate-expired"
	TLSFailCertificateNotTrusted   TLSFailure = "certificate-not-trusted"
	TLSFailValidation              TLSFailure = "validation-failure"
	TLSFailSTSPolicyFetch          TLSFailure = "sts-policy-fetch-error"
	TLSFailSTSPolicyInvalid        TLSFailure = "sts-policy-invalid"
	TLSFailSTSWebPKIInvalid        TLSFailure = "sts-webpki-invalid"
)

// TLSSessionResult is one attempt at a TLS session with an MX host, or a
// policy that could not be had: what TLS-RPT counts (RFC 8460 §4.4) and
// the metric mailroom_delivery_tls_total counts.
type TLSSessionResult struct {
	// Domain is the recipient (policy) domain.
	Domain string
	// Policy is the policy the session was made under.
	Policy TLSPolicy
	// STS is the MTA-STS policy in force, nil when there is none
	// ("no-policy-found").
	STS *MTASTSPolicy
	// MX is the receiving MX host; ReceivingIP its address and SendingIP
	// ours, when a connection was made.
	MX          string
	ReceivingIP string
	SendingIP   string
	// Outcome says how the session went for the metric; "" for a policy
	// lookup's failure (Failure an sts-* type), which had no session.
	Outcome TLSOutcome
	// Failure is the RFC 8460 result type of a failure, "" for success.
	Failure TLSFailure
	// Detail is what failed, for the report's additional information.
	Detail string
	At     time.Time
}

// TLSOutcome is the metric's result label.
type TLSOutcome string

const (
	// TLSVerified: TLS with a certificate valid for the MX name.
	TLSVerified TLSOutcome = "verified"
	// TLSUnverified: TLS whose certificate did not verify, used where no
	// policy required it.
	TLSUnverified TLSOutcome = "unverified"
	// TLSPlaintext: no TLS (not offered, or failed and retried in clear),
	// where no policy required it.
	TLSPlaintext TLSOutcome = "plaintext"
	// TLSRefused: a policy required TLS the host did not give; nothing
	// was sent to it.
	TLSRefused TLSOutcome = "refused"
)

// TLSOutcomes lists every outcome, for metrics.
var TLSOutcomes = []TLSOutcome{TLSVerified, TLSUnverified, TLSPlaintext, TLSRefused}

// TLSObserver is told of every TLS session result (package tlsrpt counts
// them for the metric and the reports). It must not block.
type TLSObserver interface {
	ObserveTLS(r TLSSessionResult)
}
