package smtp

import (
	"net/textproto"

	"github.com/mailroom/mailroom"
)

// transaction is one mail transaction (RFC 5321 §3.3) on a session: the
// delivery, the verdict so far for each recipient, and which recipients the
// server has accepted and await the data.
type transaction struct {
	c        *client
	d        *mailroom.Delivery
	res      []mailroom.RecipientResult
	settled  []bool
	accepted []int
	// throttled tells throttling replies (nil: none are), and throttle is
	// the first one the transaction got.
	throttled throttleRule
	throttle  *status
	// requireTLS puts REQUIRETLS on MAIL FROM (RFC 8689 §4.2.1).
	requireTLS bool
	// done ends the delivery's wait for the session's last outcome.
	done <-chan struct{}
}

// send runs d as one transaction on c: MAIL, a RCPT per recipient, and DATA
// once for all the accepted recipients (docs/design.md "How mail is delivered"). It returns a result
// per recipient in order, and whether the session is clean and may carry
// another transaction. A throttling reply (see throttleRule) marks the
// recipients it concerns, and is returned: the session is then not clean.
func (c *client) send(d *mailroom.Delivery, throttled throttleRule, requireTLS bool, done <-chan struct{}) ([]mailroom.RecipientResult, bool, *status) {
	t := &transaction{
		c:          c,
		d:          d,
		done:       done,
		res:        make([]mailroom.RecipientResult, len(d.Recipients)),
		settled:    make([]bool, len(d.Recipients)),
		throttled:  throttled,
		requireTLS: requireTLS,
	}
	for i, rcpt := range d.Recipients {
		t.res[i] = mailroom.RecipientResult{Recipient: rcpt, MX: c.host}
	}
	reusable := t.run()
	// Every result says whether its session ran in clear, for the email
	// log: opportunistic TLS may have gone without (RFC 7435).
	for i := range t.res {
		t.res[i].Unencrypted = !c.tls
	}
	return t.res, reusable && t.throttle == nil, t.throttle
}

// run checks the envelope and sends the transaction, pipelined when the
// server allows it.
func (t *transaction) run() bool {
	env, ok := t.envelope()
	if !ok {
		// Nothing was sent: the session is as clean as it was.
		return true
	}
	t.c.transactions++
	if _, ok := t.c.ext["PIPELINING"]; ok {
		return t.pipelined(env)
	}
	return t.stepwise(env)
}

// stepwise sends each command and waits for its reply, for servers that do
// not offer PIPELINING.
func (t *transaction) stepwise(env envelope) bool {
	c := t.c
	r, err := c.cmd("MAIL FROM:<%s>%s", t.d.MailFrom, env.params)
	if err != nil {
		return t.broken("MAIL", err)
	}
	if !t.mailAccepted(r) {
		return !r.closing()
	}
	for _, i := range env.rcpts {
		r, err := c.cmd("RCPT TO:<%s>", t.d.Recipients[i])
		if err != nil {
			return t.broken("RCPT", err)
		}
		if !t.rcptReply(i, r) {
			return false
		}
	}
	if len(t.accepted) == 0 {
		return c.reset()
	}
	r, err = c.cmd("DATA")
	if err != nil {
		return t.broken("DATA", err)
	}
	if r.Code != 354 {
		t.settleAccepted(r.refusal())
		return !r.closing() && c.reset()
	}
	return t.body()
}

// pipelined sends MAIL, every RCPT and DATA in one write and then reads
// their replies in order (RFC 2920 §3.1), saving a round trip per command.
// Every reply is read, whatever came before, so that the session stays in
// step (RFC 2920 §3.1).
func (t *transaction) pipelined(env envelope) bool {
	c := t.c
	c.deadline(c.commandTimeout)
	err := c.write("MAIL FROM:<%s>%s", t.d.MailFrom, env.params)
	for _, i := range env.rcpts {
		if err == nil {
			err = c.write("RCPT TO:<%s>", t.d.Recipients[i])
		}
	}
	if err == nil {
		err = c.write("DATA")
	}
	if err == nil {
		err = c.w.Flush()
	}
	if err != nil {
		return t.broken("MAIL", err)
	}

	r, err := t.readReply()
	if err != nil {
		return t.broken("MAIL", err)
	}
	mailOK := t.mailAccepted(r)
	if r.closing() {
		return false
	}
	for _, i := range env.rcpts {
		r, err := t.readReply()
		if err != nil {
			return t.broken("RCPT", err)
		}
		if mailOK && !t.rcptReply(i, r) {
			return false
		}
	}
	r, err = t.readReply()
	if err != nil {
		return t.broken("DATA", err)
	}
	switch {
	case r.Code == 354 && len(t.accepted) > 0:
		return t.body()
	case r.Code == 354:
		// DATA was accepted although no recipient was: end an empty
		// message at once; with no recipients it goes nowhere.
		return t.emptyData()
	case len(t.accepted) > 0:
		t.settleAccepted(r.refusal())
		return !r.closing() && c.reset()
	case mailOK:
		// Every RCPT failed, and DATA with them (RFC 5321 §3.3): the
		// MAIL may still be open.
		return !r.closing() && c.reset()
	default:
		// MAIL failed: no transaction was ever open.
		return !r.closing()
	}
}

// readReply reads the next reply of a pipelined group, each within the
// command timeout.
func (t *transaction) readReply() (reply, error) {
	t.c.deadline(t.c.commandTimeout)
	return t.c.read()
}

// mailAccepted settles every recipient when MAIL was refused: the refusal
// concerns the whole message.
func (t *transaction) mailAccepted(r reply) bool {
	if r.Code/100 == 2 {
		return true
	}
	t.settleRest(r.status())
	return false
}

// rcptReply records one recipient's RCPT reply (RFC 5321 §4.1.1.3): 2xx
// accepted, to be settled by the reply to the data; anything else is that
// recipient's verdict. It returns false when the server is closing the
// session, after settling everyone left with that reply.
func (t *transaction) rcptReply(i int, r reply) bool {
	switch {
	case r.Code/100 == 2:
		t.accepted = append(t.accepted, i)
	case r.closing():
		t.settleRest(r.status())
		return false
	default:
		t.settle(i, r.status())
	}
	return true
}

// body sends the message, dot-stuffed (RFC 5321 §4.5.2), and reads the reply
// that settles every accepted recipient (RFC 5321 §4.1.1.4), all within the
// data timeout.
func (t *transaction) body() bool {
	c := t.c
	c.deadline(c.dataTimeout)
	dw := textproto.NewWriter(c.w).DotWriter()
	_, err := dw.Write(t.d.Data)
	if err == nil {
		err = t.awaitLastOutcome()
	}
	if err == nil {
		err = dw.Close() // writes the final "." and flushes
	}
	if err != nil {
		return t.broken("the message data", err)
	}
	r, err := c.read()
	if err != nil {
		// The server may or may not have taken the message (RFC 1047):
		// unknown is temporary, so it is sent again later.
		return t.broken("the reply to the message data", err)
	}
	t.settleAccepted(r.status())
	return !r.closing()
}

// emptyData ends a DATA that has no recipient to carry, and resets the
// session, whatever the server made of the empty message.
func (t *transaction) emptyData() bool {
	c := t.c
	c.deadline(c.commandTimeout)
	if err := c.write("."); err != nil {
		return false
	}
	if err := c.w.Flush(); err != nil {
		return false
	}
	r, err := c.read()
	return err == nil && !r.closing() && c.reset()
}

// reset abandons the transaction with RSET (RFC 5321 §4.1.1.5) so that the
// session may carry the next one, and reports whether it can.
func (c *client) reset() bool {
	r, err := c.cmd("RSET")
	return err == nil && r.Code == 250
}

// broken settles every recipient without a verdict as deferred after a
// network error or a timeout; the session is done for.
func (t *transaction) broken(during string, err error) bool {
	t.settleRest(t.c.broken(during, err))
	return false
}

func (t *transaction) settle(i int, st status) {
	if t.settled[i] {
		return
	}
	t.settled[i] = true
	if t.throttled.mark(&st) && t.throttle == nil {
		t.throttle = &st
	}
	t.res[i] = st.result(t.d.Recipients[i], t.c.host)
}

func (t *transaction) settleAccepted(st status) {
	for _, i := range t.accepted {
		t.settle(i, st)
	}
}

func (t *transaction) settleRest(st status) {
	for i := range t.res {
		t.settle(i, st)
	}
}
