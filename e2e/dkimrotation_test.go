package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/require"
)

// dkimpyThroughDNS verifies every DKIM-Signature of the message on stdin
// with dkimpy (Debian's python3-dkim, an implementation independent of
// go-msgauth), each on its own, looking the keys up with dnspython at the
// DNS server given as host and port: the records the customer published.
// One line per signature, "<a=> <s=> pass|fail"; exit 0 only when every
// signature passes. Ed25519 needs PyNaCl (python3-nacl).
const dkimpyThroughDNS = `
import sys, dkim, dns.resolver
r = dns.resolver.Resolver(configure=False)
r.nameservers, r.port = [sys.argv[1]], int(sys.argv[2])
def dnsfunc(qname, timeout=5):
    try:
        ans = r.resolve(qname.decode().rstrip("."), "TXT", lifetime=timeout)
    except Exception:
        return None
    return b"".join(b"".join(rr.strings) for rr in ans)
d = dkim.DKIM(sys.stdin.buffer.read())
sigs = [v for (k, v) in d.headers if k.lower() == b"dkim-signature"]
ok = len(sigs) > 0
for i, v in enumerate(sigs):
    tags = dkim.util.parse_tag_value(v)
    good = d.verify(idx=i, dnsfunc=dnsfunc)
    ok = ok and good
    print(tags[b"a"].decode(), tags[b"s"].decode(), "pass" if good else "fail")
sys.exit(0 if ok else 1)
`

func requireDKIMpyWithNaCl(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("/usr/bin/python3", "-c", "import dkim, nacl, dns.resolver").CombinedOutput(); err != nil {
		require.Missing(t, require.DKIMpy, "dkimpy with PyNaCl (python3-dkim, python3-nacl) is needed; .ci/run installs them: %s", bytes.TrimSpace(out))
	}
}

// dkimpyVerdicts runs dkimpyThroughDNS on raw against the world's DNS.
func (w *world) dkimpyVerdicts(t *testing.T, raw []byte) (bool, []string) {
	t.Helper()
	host, port, _ := strings.Cut(w.dns.Addr(), ":")
	cmd := exec.Command("/usr/bin/python3", "-c", dkimpyThroughDNS, host, port)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running dkimpy: %v", err)
	}
	return err == nil, strings.Split(strings.TrimSpace(string(out)), "\n")
}

// sendAndReceive sends one message from shop.example and returns it as
// the receiving server got it.
func (w *world) sendAndReceive(t *testing.T, c *apitest.Client, key string) []byte {
	t.Helper()
	subject := fmt.Sprintf("Order %d", time.Now().UnixNano())
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": "ann@example.net", "subject": subject, "text": "Thanks"}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	var got []byte
	poll.Within(30*time.Second, func() bool {
		for _, m := range w.mx.Messages() {
			if bytes.Contains(m.Data, []byte(subject)) {
				got = m.Data
				return true
			}
		}
		return false
	})
	if got == nil {
		t.Fatalf("%q did not arrive", subject)
	}
	return got
}

// signedUntil sends until a message arrives whose signatures are want
// ("<a=> <s=> pass" lines, in any order) and fails after a deadline: a
// node re-reads a domain's keys within 10 s (docs/api.md "Domains").
func (w *world) signedUntil(t *testing.T, c *apitest.Client, key string, want ...string) {
	t.Helper()
	var last []string
	ok := poll.Within(45*time.Second, func() bool {
		_, last = w.dkimpyVerdicts(t, w.sendAndReceive(t, c, key))
		return sameSet(last, want)
	})
	if !ok {
		t.Fatalf("signatures by dkimpy %q, want %q", last, want)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}

func domainOf(t *testing.T, r *apitest.Response) api.Domain {
	t.Helper()
	var d api.Domain
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func dkimRecords(d api.Domain) []api.DNSRecord {
	var out []api.DNSRecord
	for _, r := range d.Records {
		if r.Purpose == api.RecordPurpose("dkim") {
			out = append(out, r)
		}
	}
	return out
}

func selectorOf(r api.DNSRecord) string {
	s, _, _ := strings.Cut(r.Name, "._domainkey.")
	return s
}

// startDKIMWorld runs a node on SQLite in a world whose DNS holds
// shop.example's records, verified.
func startDKIMWorld(t *testing.T) (*world, *server, string) {
	requireDKIMpyWithNaCl(t)
	w := newWorld(t)
	work := t.TempDir()
	dataDir := filepath.Join(work, "data")
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--data-dir", dataDir))
	s := startServer(t, dataDir, w.flags()...)
	w.verifyDomain(t, s.client, key, "shop.example")
	return w, s, key
}

// A customer rotates the DKIM key through the API with the real binary:
// the new record is pending beside the active one, a second rotation is
// refused, mail stays signed with the old key until the new record is
// published and verified, then dkimpy verifies mail signed with the new
// key against the record in DNS, and the old record carries
// removableAfter, 7 days after the move.
func TestDKIMRotationThroughDNS(t *testing.T) {
	w, s, key := startDKIMWorld(t)
	c := s.client
	before := dkimRecords(domainOf(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key})))
	if len(before) != 1 {
		t.Fatalf("DKIM records before: %+v", before)
	}
	oldSel := selectorOf(before[0])
	w.signedUntil(t, c, key, "rsa-sha256 "+oldSel+" pass")

	d := domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/dkim/rotate", Key: key}))
	recs := dkimRecords(d)
	if d.Status != "verified" || len(recs) != 2 || recs[0].Name != before[0].Name || recs[0].Status != "verified" || !recs[0].Required {
		t.Fatalf("after rotate: %s %+v", d.Status, recs)
	}
	pending := recs[1]
	newSel := selectorOf(pending)
	if pending.Status != "pending" || pending.Required || newSel == oldSel || !strings.HasPrefix(pending.Value, "v=DKIM1; k=rsa; p=") {
		t.Fatalf("pending record: %+v", pending)
	}
	if r := c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/dkim/rotate", Key: key}); r.Status != 409 || r.Code() != "invalid_state" {
		t.Fatalf("second rotation: %d %s", r.Status, r.Body)
	}

	// Not published yet: checked, still pending, the domain verified,
	// and mail signed with the old key.
	d = domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}))
	if recs := dkimRecords(d); d.Status != "verified" || recs[1].Status != "failed" || recs[0].Name != before[0].Name {
		t.Fatalf("verify before publishing: %s %+v", d.Status, recs)
	}
	raw := w.sendAndReceive(t, c, key)
	if ok, verdicts := w.dkimpyVerdicts(t, raw); !ok || !sameSet(verdicts, []string{"rsa-sha256 " + oldSel + " pass"}) {
		t.Fatalf("before the new record verified: %q", verdicts)
	}

	// Published and verified: signing moves to the new key.
	w.dns.SetTXT(pending.Name, pending.Value)
	d = domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}))
	recs = dkimRecords(d)
	if d.Status != "verified" || len(recs) != 2 || recs[0].Name != pending.Name || !recs[0].Required || recs[0].Status != "verified" {
		t.Fatalf("after verifying the new record: %s %+v", d.Status, recs)
	}
	old := recs[1]
	if old.Name != before[0].Name || old.Required || old.RemovableAfter == nil || d.LastCheckedAt == nil ||
		!old.RemovableAfter.Equal(d.LastCheckedAt.Add(7*24*time.Hour)) {
		t.Fatalf("old record after the move: %+v (checked at %v)", old, d.LastCheckedAt)
	}
	// The old record may go: mail verifies with the new record alone.
	w.dns.Remove(before[0].Name)
	w.signedUntil(t, c, key, "rsa-sha256 "+newSel+" pass")
	// And a new rotation may start.
	if r := c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/dkim/rotate", Key: key}); r.Status != 200 {
		t.Fatalf("rotation after the move: %d %s", r.Status, r.Body)
	}
}

// A customer turns Ed25519 on: its record is pending and not required,
// mail is signed with RSA alone until the record verifies, then carries
// both signatures and dkimpy verifies each against DNS; turning it off
// removes the record and the signature.
func TestDKIMEd25519ThroughDNS(t *testing.T) {
	w, s, key := startDKIMWorld(t)
	c := s.client
	rsaSel := selectorOf(dkimRecords(domainOf(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key})))[0])

	d := domainOf(t, c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"dkimEd25519": true}}))
	recs := dkimRecords(d)
	if !d.DKIMEd25519 || d.Status != "verified" || len(recs) != 2 {
		t.Fatalf("after PATCH: %+v", d)
	}
	ed := recs[1]
	if ed.Required || ed.Status != "pending" || !strings.HasPrefix(ed.Value, "v=DKIM1; k=ed25519; p=") {
		t.Fatalf("Ed25519 record: %+v", ed)
	}
	edSel := selectorOf(ed)
	// Asking again keeps the key.
	again := domainOf(t, c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"dkimEd25519": true}}))
	if r := dkimRecords(again); len(r) != 2 || r[1].Value != ed.Value {
		t.Fatalf("a second PATCH changed the key: %+v", r)
	}

	d = domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}))
	if r := dkimRecords(d); d.Status != "verified" || r[1].Status != "failed" {
		t.Fatalf("an unpublished Ed25519 record: %s %+v", d.Status, r)
	}
	raw := w.sendAndReceive(t, c, key)
	if ok, verdicts := w.dkimpyVerdicts(t, raw); !ok || !sameSet(verdicts, []string{"rsa-sha256 " + rsaSel + " pass"}) {
		t.Fatalf("before the Ed25519 record verified: %q", verdicts)
	}

	w.dns.SetTXT(ed.Name, ed.Value)
	d = domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}))
	if r := dkimRecords(d); r[1].Status != "verified" {
		t.Fatalf("Ed25519 record after publishing: %+v", r)
	}
	w.signedUntil(t, c, key, "rsa-sha256 "+rsaSel+" pass", "ed25519-sha256 "+edSel+" pass")

	d = domainOf(t, c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"dkimEd25519": false}}))
	if r := dkimRecords(d); d.DKIMEd25519 || len(r) != 1 {
		t.Fatalf("after turning Ed25519 off: %+v", d)
	}
	w.signedUntil(t, c, key, "rsa-sha256 "+rsaSel+" pass")
}

// The --dev sandbox domain is never looked up in DNS: a rotation, whose
// new record could never be found, is refused and changes nothing.
func TestDKIMRotationRefusedForTheSandbox(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/mailroom.test/dkim/rotate", Key: s.devKey})
	if r.Status != 409 || r.Code() != "invalid_state" || !strings.Contains(r.Str("message"), "sandbox") {
		t.Fatalf("rotating the sandbox: %d %s", r.Status, r.Body)
	}
	if recs := dkimRecords(domainOf(t, s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/mailroom.test", Key: s.devKey}))); len(recs) != 1 {
		t.Fatalf("the sandbox's DKIM records after a refused rotation: %+v", recs)
	}
	if r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/nothere.example/dkim/rotate", Key: s.devKey}); r.Status != 404 {
		t.Fatalf("rotating a domain the account lacks: %d %s", r.Status, r.Body)
	}
}
