package mailroom

import (
	"slices"
	"time"
)

// DKIMRetiredKeep is how long the record of a DKIM key that signing moved
// away from must stay published: mail signed with it just before the move
// may still be in queues and mailboxes whose verifiers look the key up on
// arrival or later (RFC 6376 §3.6.1 has no expiry; a week covers the retry
// windows of receivers, ours included, and the forwarding of list mail).
const DKIMRetiredKeep = 7 * 24 * time.Hour

// DKIMKeyRole says what a DKIM key beside the active RSA key is for.
type DKIMKeyRole string

const (
	// DKIMKeyPending is the next RSA key of a rotation: its record is
	// published by the customer, and signing moves to it once a check
	// finds that record.
	DKIMKeyPending DKIMKeyRole = "pending"
	// DKIMKeyRetired is an RSA key signing moved away from: it no longer
	// signs (its private key is dropped), and its record may go after
	// RemovableAfter.
	DKIMKeyRetired DKIMKeyRole = "retired"
	// DKIMKeyEd25519 is the Ed25519 key (RFC 8463): it signs beside the
	// RSA key while its record is verified.
	DKIMKeyEd25519 DKIMKeyRole = "ed25519"
)

// DomainDKIMKey is one DKIM key of a domain beside its active RSA key
// (Domain.DKIMSelector). Stored as JSON with the domain.
type DomainDKIMKey struct {
	Role     DKIMKeyRole `json:"role"`
	Selector string      `json:"selector"`
	// PublicKey is the p= value: base64 of the DER SubjectPublicKeyInfo
	// for RSA, of the 32 raw bytes for Ed25519 (RFC 8463 §4.2).
	PublicKey string `json:"publicKey"`
	// PrivateKeySealed is the PKCS #8 private key, sealed with the
	// domain's id as associated data like the active key, so that a
	// pending key becomes the active one without being opened; nil for a
	// retired key.
	PrivateKeySealed []byte    `json:"privateKeySealed,omitempty"`
	CreatedAt        time.Time `json:"createdAt"`
	// RemovableAfter is set on a retired key: DKIMRetiredKeep after the
	// move.
	RemovableAfter *time.Time `json:"removableAfter,omitempty"`
}

// RecordName is where the key's record is published (RFC 6376 §3.6.2.1).
func (k DomainDKIMKey) RecordName(domain string) string {
	return k.Selector + "._domainkey." + domain
}

// RecordValue is the key's TXT value.
func (k DomainDKIMKey) RecordValue() string {
	if k.Role == DKIMKeyEd25519 {
		return DKIMEd25519RecordValue(k.PublicKey)
	}
	return DKIMRecordValue(k.PublicKey)
}

// DKIMKeyOf returns d's key of role, or nil (the first one: a domain has at
// most one pending and one Ed25519 key, and may have several retired).
func (d *Domain) DKIMKeyOf(role DKIMKeyRole) *DomainDKIMKey {
	for i := range d.DKIMKeys {
		if d.DKIMKeys[i].Role == role {
			return &d.DKIMKeys[i]
		}
	}
	return nil
}

// SigningEd25519Key is d's Ed25519 key when it signs: its record has been
// found (verified on the last check that could decide). Before that a
// signature would only fail at every receiver.
func (d *Domain) SigningEd25519Key() *DomainDKIMKey {
	k := d.DKIMKeyOf(DKIMKeyEd25519)
	if k == nil || d.recordStatus(k.RecordName(d.Name)) != RecordVerified {
		return nil
	}
	return k
}

func (d *Domain) recordStatus(name string) RecordStatus {
	for _, r := range d.Records {
		if r.Purpose == PurposeDKIM && r.Name == name {
			return r.Status
		}
	}
	return ""
}

// RotateDKIM adds next, a new RSA key, as d's pending key with its record
// (pending, not required: the domain's status stays what the active key's
// record makes it). A domain that has a pending key already is refused
// with ECodeInvalidState: one rotation at a time, so the customer has one
// new record to publish.
func RotateDKIM(d *Domain, next DomainDKIMKey) error {
	if p := d.DKIMKeyOf(DKIMKeyPending); p != nil {
		return Errorf(ECodeInvalidState,
			"The domain %s is already rotating to the DKIM key of selector %s: publish its record (%s), verify the domain, then rotate again.",
			d.Name, p.Selector, p.RecordName(d.Name))
	}
	next.Role = DKIMKeyPending
	d.DKIMKeys = append(d.DKIMKeys, next)
	SyncDKIMRecords(d)
	return nil
}

// SetDKIMEd25519 adds key as d's Ed25519 key (on) or removes d's Ed25519
// key (off), with its record. Adding when d has one keeps the one it has
// (the record the customer may have published stays right). It reports
// whether d changed.
func SetDKIMEd25519(d *Domain, on bool, key DomainDKIMKey) bool {
	has := d.DKIMKeyOf(DKIMKeyEd25519) != nil
	switch {
	case on && !has:
		key.Role = DKIMKeyEd25519
		d.DKIMKeys = append(d.DKIMKeys, key)
	case !on && has:
		d.DKIMKeys = slices.DeleteFunc(d.DKIMKeys, func(k DomainDKIMKey) bool { return k.Role == DKIMKeyEd25519 })
	default:
		return false
	}
	SyncDKIMRecords(d)
	return true
}

// SettleDKIMKeys applies what a check of d's records (already in
// d.Records) means for its keys, and is safe to apply again:
//   - the pending key whose record is verified becomes the active key, and
//     the key it replaces is retired, its record removable DKIMRetiredKeep
//     after now (moved reports this);
//   - a retired key whose RemovableAfter has passed is forgotten, and its
//     record leaves d.Records (the customer may delete it, or has).
func SettleDKIMKeys(d *Domain, now time.Time) (moved bool) {
	SyncDKIMRecords(d)
	if p := d.DKIMKeyOf(DKIMKeyPending); p != nil && d.recordStatus(p.RecordName(d.Name)) == RecordVerified {
		removable := now.Add(DKIMRetiredKeep)
		old := DomainDKIMKey{Role: DKIMKeyRetired, Selector: d.DKIMSelector, PublicKey: d.DKIMPublicKey, RemovableAfter: &removable}
		d.DKIMSelector, d.DKIMPublicKey, d.DKIMPrivateKeySealed = p.Selector, p.PublicKey, p.PrivateKeySealed
		*p = old
		moved = true
	}
	d.DKIMKeys = slices.DeleteFunc(d.DKIMKeys, func(k DomainDKIMKey) bool {
		return k.Role == DKIMKeyRetired && k.RemovableAfter != nil && !now.Before(*k.RemovableAfter)
	})
	SyncDKIMRecords(d)
	return moved
}

// SyncDKIMRecords makes d's DKIM records those of its keys, keeping each
// record's last check (status, found, problem): the active key's record
// first and required, then the pending, Ed25519 and retired keys' records,
// not required (a retired one with its RemovableAfter). A key without a
// record gets a pending one (the active key's record is made with the
// domain, by BuildDomainRecords); a record whose key is gone leaves. The other
// records keep their places.
func SyncDKIMRecords(d *Domain) {
	if d.DKIMSelector == "" && len(d.DKIMKeys) == 0 {
		return // no key to publish (a domain made up by a test)
	}
	byName := map[string]DNSRecord{}
	at := -1
	var others []DNSRecord
	for _, r := range d.Records {
		if r.Purpose != PurposeDKIM {
			others = append(others, r)
			continue
		}
		if at < 0 {
			at = len(others)
		}
		byName[r.Name] = r
	}
	if at < 0 {
		at = 0
	}
	active := DomainDKIMKey{Selector: d.DKIMSelector, PublicKey: d.DKIMPublicKey}
	keys := []DomainDKIMKey{active}
	for _, role := range []DKIMKeyRole{DKIMKeyPending, DKIMKeyEd25519, DKIMKeyRetired} {
		for _, k := range d.DKIMKeys {
			if k.Role == role {
				keys = append(keys, k)
			}
		}
	}
	dkim := make([]DNSRecord, 0, len(keys))
	for i, k := range keys {
		name := k.RecordName(d.Name)
		r, ok := byName[name]
		if !ok && i == 0 {
			continue // the active key's record comes with the domain (BuildDomainRecords)
		}
		if !ok {
			r = DNSRecord{Purpose: PurposeDKIM, Type: "TXT", Name: name, Status: RecordPending}
		}
		r.Value = k.RecordValue()
		r.Required = i == 0
		r.RemovableAfter = k.RemovableAfter
		dkim = append(dkim, r)
	}
	out := make([]DNSRecord, 0, len(others)+len(dkim))
	out = append(out, others[:at]...)
	out = append(out, dkim...)
	d.Records = append(out, others[at:]...)
}
