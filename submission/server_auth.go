package submission

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
)

// Replies to AUTH (RFC 4954 §6, enhanced codes of RFC 5248).
var (
	// 538 5.7.11: the mechanism needs an encrypted connection.
	errEncryptionRequired = smtpserver.Reply(538, gosmtp.EnhancedCode{5, 7, 11}, "Encryption required: send STARTTLS first")
	// 535 5.7.8, whatever was wrong with the key: an attacker learns
	// nothing from the reply (docs/api.md "SMTP submission").
	errCredentialsInvalid = smtpserver.Reply(535, gosmtp.EnhancedCode{5, 7, 8}, "Authentication credentials invalid")
	// 454 4.7.0: temporary authentication failure.
	errAuthTemporary = smtpserver.ServiceFailure(454, gosmtp.EnhancedCode{4, 7, 0}, "Temporary authentication failure, try again later")
	// 421 4.3.2 (RFC 3463 §3.4 "system not accepting network messages"),
	// and the connection is closed (RFC 5321 §3.8): the server shut down
	// during a login's delay.
	errShuttingDown = smtpserver.Reply(421, gosmtp.EnhancedCode{4, 3, 2}, "Service shutting down, try again later")
)

// AuthMechanisms offers PLAIN (RFC 4616) and LOGIN (the de-facto
// mechanism many older clients know alone) under TLS, and nothing before:
// EHLO then advertises no AUTH (RFC 4954 §4, RFC 8314 §3.3).
func (x *session) AuthMechanisms() []string {
	if _, ok := x.Conn.TLSConnectionState(); !ok {
		return nil
	}
	return []string{sasl.Plain, sasl.Login}
}

// Auth starts a login. go-smtp has decoded the initial response, if any,
// but nothing of it is looked at before TLS.
func (x *session) Auth(mech string) (sasl.Server, error) {
	s := x.s
	if _, ok := x.Conn.TLSConnectionState(); !ok {
		s.base.Observe(OutcomeAuthNoTLS)
		return nil, errEncryptionRequired
	}
	switch mech {
	case sasl.Plain:
		return &plainServer{check: x.login}, nil
	case sasl.Login:
		return &loginServer{check: x.login}, nil
	}
	return nil, gosmtp.ErrAuthUnknownMechanism
}

// login checks the password (the API key) of a login; any user name is
// taken, since the key names its account. From an address past its budget
// of failures it first waits (authLimiter.delay), then checks all the
// same, so that a right key always logs in.
func (x *session) login(password string) error {
	s := x.s
	if d := s.auth.delay(x.client); d > 0 {
		s.base.Observe(OutcomeAuthLimited)
		s.base.Log().Info("submission login delayed: too many failures from the address", "remote", x.Remote, "delay", d)
		// The wait is on the connection's own goroutine, which the
		// connection caps already bound; no timer outlives it. It ends
		// early when the server shuts down (its context), and the
		// connection is then closed.
		if err := s.sleep(s.base.Context(), d); err != nil {
			return x.closeWith(errShuttingDown)
		}
	}
	ctx, cancel := s.base.HandlerContext()
	defer cancel()
	key, err := s.Handler.Authenticate(ctx, password)
	if err == nil && key == nil {
		err = errors.New("submission: Handler.Authenticate returned neither a key nor an error")
	}
	if err != nil {
		switch code := mailroom.ErrorCode(err); {
		case smtpserver.Temporary(err):
			s.base.Observe(OutcomeAuthUnavailable)
			s.base.Log().Warn("submission login could not be checked; answered 454", "remote", x.Remote, "err", err)
			return errAuthTemporary
		case code == mailroom.ECodeInternal:
			// Not the client's doing: neither charged to its address nor
			// told as a wrong key.
			s.base.Observe(OutcomeAuthUnavailable)
			s.base.Log().Error("submission login check failed; answered 454", "remote", x.Remote, "err", err)
			return errAuthTemporary
		default:
			s.auth.failed(x.client)
			s.base.Observe(OutcomeAuthFailed)
			// The error names the key id at most, never the secret.
			s.base.Log().Info("submission login failed", "remote", x.Remote, "reason", code)
			return errCredentialsInvalid
		}
	}
	x.Mu.Lock()
	x.key, x.password = key, password
	x.Mu.Unlock()
	s.base.Observe(OutcomeAuthOK)
	s.base.Log().Info("submission login", "remote", x.Remote, "key_id", key.KeyID, "account_id", key.AccountID)
	return nil
}

// closeWith writes reply and closes the connection: go-smtp would keep it
// open after any reply the session returns. The reply it then writes too
// goes nowhere.
func (x *session) closeWith(reply *gosmtp.SMTPError) error {
	nc := x.Conn.Conn()
	_ = nc.SetWriteDeadline(time.Now().Add(x.Server.Limits().WriteTimeout))
	_, _ = fmt.Fprintf(nc, "%d %d.%d.%d %s\r\n", reply.Code,
		reply.EnhancedCode[0], reply.EnhancedCode[1], reply.EnhancedCode[2], reply.Message)
	_ = nc.Close()
	return reply
}

// plainServer is SASL PLAIN (RFC 4616 §2): authzid NUL authcid NUL passwd.
// go-sasl's would answer a malformed response with Go text; this one
// answers it as a wrong key, and charges it as one.
type plainServer struct {
	check func(password string) error
	done  bool
}

func (p *plainServer) Next(response []byte) ([]byte, bool, error) {
	if p.done {
		return nil, true, sasl.ErrUnexpectedClientResponse
	}
	if response == nil {
		// No initial response: an empty challenge asks for it (RFC 4954 §4).
		return []byte{}, false, nil
	}
	p.done = true
	parts := bytes.Split(response, []byte{0})
	if len(parts) != 3 {
		return nil, true, p.check("")
	}
	return nil, true, p.check(string(parts[2]))
}

// loginServer is the LOGIN mechanism (draft-murchison-sasl-login): the
// server asks "Username:" then "Password:"; an initial response is the
// user name.
type loginServer struct {
	check    func(password string) error
	haveUser bool
	done     bool
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	switch {
	case l.done:
		return nil, true, sasl.ErrUnexpectedClientResponse
	case !l.haveUser && response == nil:
		return []byte("Username:"), false, nil
	case !l.haveUser:
		// Any user name: the password names the account.
		l.haveUser = true
		return []byte("Password:"), false, nil
	}
	l.done = true
	return nil, true, l.check(string(response))
}
