package certs

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

func TestIssueFreshRenew(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	ca, err := NewCA("test CA", now)
	if err != nil {
		t.Fatal(err)
	}
	serving, err := Issue(ca, "svc", "ns", now)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(serving.CertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"}
	for i, n := range want {
		if cert.DNSNames[i] != n {
			t.Errorf("DNS names = %v, want %v", cert.DNSNames, want)
		}
	}
	if !Signs(ca, serving) {
		t.Error("the CA must sign the serving certificate")
	}
	other, _ := NewCA("other", now)
	if Signs(other, serving) {
		t.Error("another CA must not verify it")
	}
	tests := []struct {
		at   time.Time
		want bool
	}{
		{now, true},
		{now.Add(Validity - RenewBefore - time.Hour), true},
		{now.Add(Validity - RenewBefore + time.Hour), false},
		{now.Add(-2 * time.Hour), false},
	}
	for _, tt := range tests {
		if got := Fresh(serving, tt.at); got != tt.want {
			t.Errorf("Fresh at %v = %v, want %v", tt.at, got, tt.want)
		}
	}
	if at, ok := RenewAt(serving); !ok || !at.Equal(cert.NotAfter.Add(-RenewBefore)) {
		t.Errorf("RenewAt = %v, %v", at, ok)
	}
	if Fresh(Pair{CertPEM: []byte("junk")}, now) {
		t.Error("junk is never fresh")
	}
}
