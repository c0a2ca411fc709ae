package mailroom

// MaySendFrom reports whether the key may send mail from the sending
// domain name (a normalised name, as Message.Domain): any domain of its
// account, or its Domain alone when it has one. Whether the account may
// send from the domain at all (verified) is the domains service's
// question, asked beside this one.
func (k *APIKey) MaySendFrom(name string) bool {
	return k.Domain == "" || k.Domain == name
}

// CheckSendingFrom is MaySendFrom as the send paths answer it: nil, or
// ECodeDomainNotVerified naming the one domain the key may use. It is the
// code of a From domain the account may not use (403 on /v1, Resend's
// 403 validation_error), because that is what it is to this key: a domain
// it cannot send from, which no retry and no other scope changes. whose
// says which domain of the message it is ("From", "envelope sender's").
func (k *APIKey) CheckSendingFrom(whose, name string) error {
	if k.MaySendFrom(name) {
		return nil
	}
	return Errorf(ECodeDomainNotVerified, "This API key may send from %s only; the %s domain %s is not it.", k.Domain, whose, name)
}
