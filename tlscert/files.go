package tlscert

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// LoadFiles loads the PEM certificate chain in certFile and the PEM private
// key in keyFile, the pair an operator gives with --tls-cert and --tls-key.
//
// Each file is checked on its own before the pair is matched, so that the
// error says which file is wrong (missing, not PEM, the files swapped, or a
// key that belongs to another certificate) instead of crypto/tls's message,
// which names neither. Errors never quote the key file's contents.
func LoadFiles(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: certificate file: %w", err)
	}
	if err := checkCertificatePEM(certPEM); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: certificate file %s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: key file: %w", err)
	}
	if err := checkPrivateKeyPEM(keyPEM); err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: key file %s: %w", keyFile, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("tlscert: key file %s does not belong to certificate file %s: %w", keyFile, certFile, err)
	}
	return cert, nil
}

// checkCertificatePEM reports whether data holds at least one parseable
// CERTIFICATE block.
func checkCertificatePEM(data []byte) error {
	found := false
	sawKey := false
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if isPrivateKeyType(block.Type) {
			sawKey = true
			continue
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("unreadable certificate: %w", err)
		}
		found = true
	}
	switch {
	case found:
		return nil
	case sawKey:
		return errors.New("holds a private key but no certificate; are the certificate and key files swapped?")
	default:
		return errors.New("no PEM CERTIFICATE block found")
	}
}

// checkPrivateKeyPEM reports whether data's first private key block parses
// in the encoding its PEM type names.
func checkPrivateKeyPEM(data []byte) error {
	sawCertificate := false
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			sawCertificate = true
			continue
		}
		if !isPrivateKeyType(block.Type) {
			continue
		}
		return parsePrivateKeyBlock(block)
	}
	if sawCertificate {
		return errors.New("holds a certificate but no private key; are the certificate and key files swapped?")
	}
	return errors.New("no PEM PRIVATE KEY block found")
}

func isPrivateKeyType(pemType string) bool {
	return pemType == "PRIVATE KEY" || strings.HasSuffix(pemType, " PRIVATE KEY")
}

// parsePrivateKeyBlock parses the encodings crypto/tls accepts. The parsers'
// errors are dropped because they can describe the key's structure; the PEM
// type is enough for an operator to act on.
func parsePrivateKeyBlock(block *pem.Block) error {
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		_, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		_, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		_, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "ENCRYPTED PRIVATE KEY":
		return errors.New("the private key is encrypted; give an unencrypted key")
	default:
		return fmt.Errorf("unsupported private key type %q", block.Type)
	}
	if err != nil {
		return fmt.Errorf("unreadable %s block", block.Type)
	}
	return nil
}
