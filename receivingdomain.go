package mailroom

// ReceivesMail reports whether the inbound MX takes mail for d (docs/api.md
// "Receiving mail"): its receiving flag is set, it may send (verified, or
// within the grace of a temporary failure, so that one record missing
// for a while does not turn a customer's mail away with a 550), and its
// MX record of purpose receiving is verified: until the customer's MX
// points at the service, mail for the domain has no reason to arrive
// here, and taking it would let anyone who adds a domain catch its mail.
func (d *Domain) ReceivesMail() bool {
	if !d.Receiving || !d.Status.CanSend() {
		return false
	}
	for _, r := range d.Records {
		if r.Purpose == PurposeReceiving {
			return r.Status == RecordVerified
		}
	}
	return false
}
