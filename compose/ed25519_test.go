package compose

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/require"
)

// testEd25519Key is an Ed25519 key made the way the service makes one
// (RFC 8463), with its record, beside testDomainKey's RSA key.
var testEd25519Key = sync.OnceValues(func() (mailroom.DKIMKey, string) {
	sel, priv, pub, err := mailroom.NewDKIMEd25519Key(testNow)
	if err != nil {
		panic(err)
	}
	return mailroom.DKIMKey{Domain: "example.com", Selector: sel, PrivateKeyPKCS8: priv},
		mailroom.DKIMEd25519RecordValue(pub)
})

// bothKeys is the RSA key with the Ed25519 key beside it.
func bothKeys() mailroom.DKIMKey {
	key, _ := testDomainKey()
	ed, _ := testEd25519Key()
	key.Also = []mailroom.DKIMKey{ed}
	return key
}

// dkimpyVerifyEach verifies every DKIM-Signature of the message on stdin
// with dkimpy, each on its own (dkim.verify checks only the first), the
// keys given as name=record arguments. It prints one line per signature,
// "<a=> <s=> pass|fail", and exits 0 only when every one passes. dkimpy
// verifies ed25519-sha256 with PyNaCl (python3-nacl).
const dkimpyVerifyEach = `
import sys, dkim
records = dict(a.encode().split(b"=", 1) for a in sys.argv[1:])
def dnsfunc(qname, timeout=5):
    return records.get(qname.rstrip(b"."))
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

func dkimpyEach(t *testing.T, raw []byte) (bool, string) {
	t.Helper()
	rsaKey, rsaRecord := testDomainKey()
	edKey, edRecord := testEd25519Key()
	cmd := exec.Command(systemPython, "-c", dkimpyVerifyEach,
		rsaKey.Selector+"._domainkey.example.com="+rsaRecord, edKey.Selector+"._domainkey.example.com="+edRecord)
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running dkimpy: %v", err)
	}
	return err == nil, strings.TrimSpace(string(out))
}

// requireNaCl is requireDKIMpy for Ed25519: dkimpy verifies it with PyNaCl.
func requireNaCl(t *testing.T) {
	t.Helper()
	requireDKIMpy(t)
	if out, err := exec.Command(systemPython, "-c", "import nacl").CombinedOutput(); err != nil {
		require.Missing(t, require.DKIMpy, "python3-nacl (Debian), which dkimpy needs for Ed25519, is not installed; .ci/run installs it (%s)", lastLine(out))
	}
}

// Mail of a domain with an Ed25519 key carries two signatures, RSA and
// Ed25519 (RFC 8463 §3), and dkimpy verifies each: transactional mail
// signed once, a recipient's copy of marketing mail and of tracked mail
// (whose body hash is its own), and a message
// submitted whole over SMTP.
func TestEd25519BesideRSAVerifiesWithDKIMpy(t *testing.T) {
	requireNaCl(t)
	rsaKey, _ := testDomainKey()
	edKey, _ := testEd25519Key()
	key := bothKeys()

	transactional, err := testComposer().Compose(testMessage(), key)
	if err != nil {
		t.Fatal(err)
	}
	m := testMessage()
	m.Category = mailroom.CategoryMarketing
	base, err := testComposer().Compose(m, key)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := testComposer().Copies(base, key)
	if err != nil {
		t.Fatal(err)
	}
	marketing, err := copies.Copy(copyFields(t, m, "bob@example.net"), "")
	if err != nil {
		t.Fatal(err)
	}
	trackedBase, err := testComposer().Compose(trackedMessage(), key)
	if err != nil {
		t.Fatal(err)
	}
	tracked, _ := trackedCopy(t, trackedBase, key, nil, "bob@example.net")
	submittedRaw, err := testComposer().SignRaw([]byte(submitted), key)
	if err != nil {
		t.Fatal(err)
	}

	for name, raw := range map[string][]byte{"transactional": transactional, "marketing copy": marketing, "tracked copy": tracked, "submitted": submittedRaw} {
		t.Run(name, func(t *testing.T) {
			ok, out := dkimpyEach(t, raw)
			want := []string{"rsa-sha256 " + rsaKey.Selector + " pass", "ed25519-sha256 " + edKey.Selector + " pass"}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("dkimpy does not say %q:\n%s", w, out)
				}
			}
			if !ok || strings.Count(out, "\n")+1 != 2 {
				t.Fatalf("dkimpy, want two passing signatures:\n%s", out)
			}
			// go-msgauth agrees.
			vs, err := verifyWith(raw)
			if err != nil || len(vs) != 2 || vs[0].Err != nil || vs[1].Err != nil {
				t.Fatalf("go-msgauth: %v %+v", err, vs)
			}
			// A tampered body fails both.
			forged := bytes.Replace(raw, []byte("shipped"), []byte("stalled"), 1)
			if name == "submitted" {
				forged = bytes.Replace(raw, []byte("tabbed"), []byte("tapped"), 1)
			}
			if ok, out := dkimpyEach(t, forged); ok || strings.Contains(out, "pass") {
				t.Fatalf("dkimpy accepts a tampered body:\n%s", out)
			}
		})
	}
}

// An Ed25519 key alone does not sign: verifiers that know only RSA would
// find nothing to check.
func TestEd25519AloneRefused(t *testing.T) {
	ed, _ := testEd25519Key()
	if _, err := testComposer().Compose(testMessage(), ed); err == nil || !strings.Contains(err.Error(), "beside an RSA key") {
		t.Fatalf("composed with Ed25519 alone: %v", err)
	}
}

// verifyWith verifies raw with go-msgauth, both test keys published.
func verifyWith(raw []byte) ([]*dkim.Verification, error) {
	edKey, edRecord := testEd25519Key()
	return dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: func(name string) ([]string, error) {
		if name == edKey.Selector+"._domainkey."+edKey.Domain {
			return []string{edRecord}, nil
		}
		return lookupTXT(name)
	}})
}
