package mailroom

import "strings"

// SimulatorDomain is the domain of the test addresses (docs/api.md "Test
// addresses"). ".invalid" is reserved by RFC 2606 §2 and RFC 6761 §6.4: no
// name under it ever resolves, so mail to it could never leave even if it
// tried. The delivery runtime never tries: it settles these recipients
// itself, with no DNS lookup and no connection, in every delivery mode.
const SimulatorDomain = "simulator.invalid"

// SimulatedOutcome is what a test address does.
type SimulatedOutcome string

const (
	// SimulateDelivered: delivered (250).
	SimulateDelivered SimulatedOutcome = "delivered"
	// SimulateBounced: a hard bounce, 550 5.1.1 (RFC 3463 §3.2 "bad
	// destination mailbox address").
	SimulateBounced SimulatedOutcome = "bounced"
	// SimulateComplained: delivered, then a complaint, as a feedback loop
	// reports one (RFC 5965).
	SimulateComplained SimulatedOutcome = "complained"
	// SimulateDeferred: one deferral (451 4.3.0), then delivered at the
	// retry, which comes after the retry schedule's first delay.
	SimulateDeferred SimulatedOutcome = "deferred"
	// SimulateSuppressed: settled at acceptance as if the address were on
	// the account's suppression list; never queued.
	SimulateSuppressed SimulatedOutcome = "suppressed"
	// SimulateUnknown: any other local part at SimulatorDomain: bounced
	// 5.1.1, as a mailbox that does not exist.
	SimulateUnknown SimulatedOutcome = "unknown"
)

// Simulated says whether address is a test address and, if so, what it
// does. The local part is compared without case and without a "+label"
// (subaddress, RFC 5233), so that "Bounced+signup-42@simulator.invalid"
// bounces and an application can tell its tests apart.
func Simulated(address string) (SimulatedOutcome, bool) {
	at := strings.LastIndexByte(address, '@')
	if at < 0 || !strings.EqualFold(strings.TrimSuffix(address[at+1:], "."), SimulatorDomain) {
		return "", false
	}
	local := strings.ToLower(address[:at])
	if plus := strings.IndexByte(local, '+'); plus >= 0 {
		local = local[:plus]
	}
	switch o := SimulatedOutcome(local); o {
	case SimulateDelivered, SimulateBounced, SimulateComplained, SimulateDeferred, SimulateSuppressed:
		return o, true
	}
	return SimulateUnknown, true
}

// SimulatedSuppressed says whether address is accepted as suppressed
// (SimulateSuppressed), with no entry on the suppression list.
func SimulatedSuppressed(address string) bool {
	o, ok := Simulated(address)
	return ok && o == SimulateSuppressed
}

// SimulatedMX is the host a simulated result names, where a real one names
// the MX that answered.
const SimulatedMX = "simulator.invalid"

// SimulatedResult is the transport's result for a test address on its
// attempt after attempts earlier ones, as the receiver's reply would give
// it: NewAttempt turns it into the recipient's state and event as it does
// a real reply. The caller drops the suppression a real hard bounce adds
// (Attempt.Suppress): test addresses add none.
func SimulatedResult(address string, attempts int) RecipientResult {
	res := RecipientResult{Recipient: address, MX: SimulatedMX}
	o, _ := Simulated(address)
	switch {
	case o == SimulateBounced:
		res.Outcome, res.Code, res.Enhanced = Bounced, 550, "5.1.1"
		res.Response = "550 5.1.1 <" + address + ">: simulated hard bounce: the mailbox does not exist"
	case o == SimulateUnknown:
		res.Outcome, res.Code, res.Enhanced = Bounced, 550, "5.1.1"
		res.Response = "550 5.1.1 <" + address + ">: no such test address; the test addresses are delivered, bounced, complained, deferred and suppressed"
	case o == SimulateDeferred && attempts == 0:
		res.Outcome, res.Code, res.Enhanced = Deferred, 451, "4.3.0"
		res.Response = "451 4.3.0 <" + address + ">: simulated deferral, delivered at the next attempt"
		res.Reason = DeferTemporary
	default:
		// delivered, complained (whose complaint follows), deferred on
		// its retry; suppressed never reaches delivery, but would be
		// delivered if it did.
		res.Outcome, res.Code, res.Enhanced = Delivered, 250, "2.0.0"
		res.Response = "250 2.0.0 simulated delivery to <" + address + ">"
	}
	return res
}
