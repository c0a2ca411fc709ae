package tlstest

import (
	"crypto/x509"
	"testing"
	"time"
)

// A certificate verifies for its names against the authority's pool, and
// not for another name, nor once expired, nor against another authority.
func TestIssuedCertificatesVerifyOnlyForTheirNames(t *testing.T) {
	ca := NewCA(t)
	cert := ca.Issue(t, "mx.example.test", "127.0.0.9")
	verify := func(pool *x509.CertPool, name string, at time.Time) error {
		inter := x509.NewCertPool()
		_, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, Intermediates: inter, CurrentTime: at})
		return err
	}
	now := time.Now()
	if err := verify(ca.Pool(), "mx.example.test", now); err != nil {
		t.Fatalf("its own name: %v", err)
	}
	if err := verify(ca.Pool(), "127.0.0.9", now); err != nil {
		t.Fatalf("its IP address: %v", err)
	}
	if verify(ca.Pool(), "other.example.test", now) == nil {
		t.Fatal("verified for another name")
	}
	if verify(ca.Pool(), "mx.example.test", now.AddDate(0, 2, 0)) == nil {
		t.Fatal("verified after it expired")
	}
	if verify(NewCA(t).Pool(), "mx.example.test", now) == nil {
		t.Fatal("verified against another authority")
	}
}
