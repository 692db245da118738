package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Validity and renewal follow OLM: two years, renewed well before the end.
const (
	Validity    = 2 * 365 * 24 * time.Hour
	RenewBefore = 30 * 24 * time.Hour
)

// Pair is a PEM certificate and its PEM private key.
type Pair struct {
	CertPEM, KeyPEM []byte
}

// NewCA makes a self-signed CA valid from now.
func NewCA(commonName string, now time.Time) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Pair{}, fmt.Errorf("sign CA: %w", err)
	}
	return encode(der, key)
}

// Issue signs a serving certificate for a Service's DNS names.
func Issue(ca Pair, service, namespace string, now time.Time) (Pair, error) {
	caCert, caKey, err := parse(ca)
	if err != nil {
		return Pair{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("generate serving key: %w", err)
	}
	host := service + "." + namespace
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host + ".svc"},
		DNSNames:     []string{host, host + ".svc", host + ".svc.cluster.local"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     minTime(now.Add(Validity), caCert.NotAfter),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return Pair{}, fmt.Errorf("sign serving certificate for %s: %w", host, err)
	}
	return encode(der, key)
}

// Fresh reports whether p parses and stays valid past now+RenewBefore.
func Fresh(p Pair, now time.Time) bool {
	cert, _, err := parse(p)
	return err == nil && now.Add(RenewBefore).Before(cert.NotAfter) && !now.Before(cert.NotBefore)
}

// Signs reports whether ca signed p.
func Signs(ca, p Pair) bool {
	caCert, _, err := parse(ca)
	if err != nil {
		return false
	}
	cert, _, err := parse(p)
	return err == nil && cert.CheckSignatureFrom(caCert) == nil
}

func parse(p Pair) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(p.CertPEM)
	kb, _ := pem.Decode(p.KeyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("certificate or key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse certificate: %w", err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse key: %w", err)
	}
	return cert, key, nil
}

func encode(der []byte, key *ecdsa.PrivateKey) (Pair, error) {
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("encode key: %w", err)
	}
	return Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return big.NewInt(1)
	}
	return n
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// RenewAt is when p should be replaced.
func RenewAt(p Pair) (time.Time, bool) {
	cert, _, err := parse(p)
	if err != nil {
		return time.Time{}, false
	}
	return cert.NotAfter.Add(-RenewBefore), true
}
