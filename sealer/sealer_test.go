package sealer_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"testing"

	"github.com/mailroom/mailroom/sealer"
)

// testKey returns a fixed key whose bytes are all b.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, sealer.KeySize) }

func newSealer(t *testing.T, key []byte) *sealer.Sealer {
	t.Helper()
	s, err := sealer.New(key)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

var (
	dkimKey  = []byte("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA...\n-----END PRIVATE KEY-----\n")
	domainID = []byte("dom_01hzy3k6c7d8e9f0g1h2j3k4m5")
)

func TestNewKeyLength(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := sealer.New(make([]byte, n)); err == nil {
			t.Errorf("New accepted a %d-byte key", n)
		}
	}
	if _, err := sealer.New(make([]byte, 32)); err != nil {
		t.Errorf("New rejected a 32-byte key: %v", err)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := newSealer(t, testKey(1))
	for _, plaintext := range [][]byte{dkimKey, {}, {0}, bytes.Repeat([]byte("x"), 1<<16)} {
		for _, ad := range [][]byte{domainID, nil} {
			sealed := s.Seal(plaintext, ad)
			got, err := s.Open(sealed, ad)
			if err != nil {
				t.Fatalf("Open(Seal(%d bytes)): %v", len(plaintext), err)
			}
			if !bytes.Equal(got, plaintext) {
				t.Fatalf("Open returned %d bytes, want the %d sealed", len(got), len(plaintext))
			}
		}
	}
}

func TestSealLayout(t *testing.T) {
	key := testKey(7)
	sealed := newSealer(t, key).Seal(dkimKey, domainID)

	if want := 1 + 12 + len(dkimKey) + 16; len(sealed) != want {
		t.Fatalf("sealed length %d, want %d (version + nonce + ciphertext + tag)", len(sealed), want)
	}
	if sealed[0] != 0x01 {
		t.Fatalf("version byte %#x, want 0x01", sealed[0])
	}
	if bytes.Contains(sealed, dkimKey[:27]) {
		t.Fatal("sealed output contains the plaintext")
	}
	// Decrypt with AES-256-GCM directly: the layout is version || nonce ||
	// ciphertext+tag, and the associated data is exactly what was passed.
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gcm.Open(nil, sealed[1:13], sealed[13:], domainID)
	if err != nil {
		t.Fatalf("standard AES-256-GCM cannot open the blob: %v", err)
	}
	if !bytes.Equal(got, dkimKey) {
		t.Fatal("standard AES-256-GCM opened to other bytes")
	}
}

func TestSealIsRandomized(t *testing.T) {
	s := newSealer(t, testKey(1))
	a := s.Seal(dkimKey, domainID)
	b := s.Seal(dkimKey, domainID)
	if bytes.Equal(a, b) {
		t.Fatal("two seals of the same plaintext are identical")
	}
	if bytes.Equal(a[1:13], b[1:13]) {
		t.Fatal("two seals share a nonce")
	}
}

func TestOpenWrongKey(t *testing.T) {
	sealed := newSealer(t, testKey(1)).Seal(dkimKey, domainID)
	got, err := newSealer(t, testKey(2)).Open(sealed, domainID)
	if !errors.Is(err, sealer.ErrNotAuthentic) {
		t.Fatalf("Open under another key: err %v, want ErrNotAuthentic", err)
	}
	if got != nil {
		t.Fatal("Open returned plaintext alongside an error")
	}
}

func TestOpenWrongAssociatedData(t *testing.T) {
	s := newSealer(t, testKey(1))
	sealed := s.Seal(dkimKey, domainID)
	for _, ad := range [][]byte{
		[]byte("dom_01hzy3k6c7d8e9f0g1h2j3k4m6"), // another row
		domainID[:len(domainID)-1],
		nil,
	} {
		if _, err := s.Open(sealed, ad); !errors.Is(err, sealer.ErrNotAuthentic) {
			t.Errorf("Open with associated data %q: err %v, want ErrNotAuthentic", ad, err)
		}
	}
	// And the reverse: sealed without, opened with.
	if _, err := s.Open(s.Seal(dkimKey, nil), domainID); !errors.Is(err, sealer.ErrNotAuthentic) {
		t.Errorf("blob sealed without associated data opened with some: err %v", err)
	}
}

func TestOpenDetectsTampering(t *testing.T) {
	s := newSealer(t, testKey(1))
	sealed := s.Seal(dkimKey, domainID)
	// Flip one bit in every byte after the version: nonce, ciphertext, tag.
	for i := 1; i < len(sealed); i++ {
		tampered := bytes.Clone(sealed)
		tampered[i] ^= 0x01
		if _, err := s.Open(tampered, domainID); !errors.Is(err, sealer.ErrNotAuthentic) {
			t.Fatalf("bit flipped at byte %d: err %v, want ErrNotAuthentic", i, err)
		}
	}
	if _, err := s.Open(append(bytes.Clone(sealed), 0), domainID); !errors.Is(err, sealer.ErrNotAuthentic) {
		t.Errorf("byte appended: err %v, want ErrNotAuthentic", err)
	}
	if _, err := s.Open(sealed[:len(sealed)-1], domainID); !errors.Is(err, sealer.ErrNotAuthentic) {
		t.Errorf("last byte cut: err %v, want ErrNotAuthentic", err)
	}
	// The original still opens: Open did not modify its input.
	if _, err := s.Open(sealed, domainID); err != nil {
		t.Fatalf("untouched blob no longer opens: %v", err)
	}
}

func TestOpenUnknownVersion(t *testing.T) {
	s := newSealer(t, testKey(1))
	sealed := s.Seal(dkimKey, domainID)
	for _, version := range []byte{0x00, 0x02, 0xff} {
		changed := bytes.Clone(sealed)
		changed[0] = version
		if _, err := s.Open(changed, domainID); !errors.Is(err, sealer.ErrUnknownVersion) {
			t.Errorf("version %#x: err %v, want ErrUnknownVersion", version, err)
		}
	}
}

func TestOpenShortInput(t *testing.T) {
	s := newSealer(t, testKey(1))
	sealedEmpty := s.Seal(nil, domainID) // the shortest valid blob: 29 bytes
	if len(sealedEmpty) != 29 {
		t.Fatalf("sealed empty plaintext is %d bytes, want 29", len(sealedEmpty))
	}
	for _, n := range []int{0, 1, 12, 13, 28} {
		if _, err := s.Open(sealedEmpty[:n], domainID); !errors.Is(err, sealer.ErrTruncated) {
			t.Errorf("%d-byte input: err %v, want ErrTruncated", n, err)
		}
	}
	if _, err := s.Open(sealedEmpty, domainID); err != nil {
		t.Errorf("29-byte blob: %v", err)
	}
}

// Derived keys are stable for a label and a secret key, and differ
// between labels and between secret keys.
func TestDeriveKey(t *testing.T) {
	a, b := newSealer(t, testKey(1)), newSealer(t, testKey(2))
	x := a.DeriveKey("return-path")
	if !bytes.Equal(x, newSealer(t, testKey(1)).DeriveKey("return-path")) {
		t.Fatal("the same label and key derived two keys")
	}
	if bytes.Equal(x, a.DeriveKey("unsubscribe")) || bytes.Equal(x, b.DeriveKey("return-path")) {
		t.Fatal("derived keys collide across labels or secret keys")
	}
	if len(x) != 32 {
		t.Fatalf("derived key of %d bytes", len(x))
	}
}
