package webhooks

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

const (
	svc = "rukpak-kapp-webhook"
	ns  = "rukpak-system"
)

// verifies says the bundle makes the API server trust what is served, for
// the Service's name, at when.
func verifies(t *testing.T, bundle []byte, serving certs.Pair, when time.Time) bool {
	t.Helper()
	pair, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Fatal("bundle holds no certificate")
	}
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: svc + "." + ns + ".svc", CurrentTime: when})
	return err == nil
}

func certCount(b []byte) int { return bytes.Count(b, []byte("BEGIN CERTIFICATE")) }

func mustPlan(t *testing.T, data map[string][]byte, now time.Time) Plan {
	t.Helper()
	p, err := PlanCertificates(data, svc, ns, now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanCertificates_Lifecycle(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

	first := mustPlan(t, nil, t0)
	if !first.Changed || certCount(first.Bundle) != 1 || !verifies(t, first.Bundle, first.Serving, t0) {
		t.Fatalf("first start: changed %v, %d CAs", first.Changed, certCount(first.Bundle))
	}
	renewAt, _ := certs.RenewAt(first.Serving)
	if !first.NextCheck.Equal(renewAt) {
		t.Errorf("next check %s, want the renewal %s", first.NextCheck, renewAt)
	}

	// Another replica, or a restart, reads what was written: nothing to do.
	again := mustPlan(t, first.Data, t0.Add(24*time.Hour))
	if again.Changed || !bytes.Equal(again.Bundle, first.Bundle) || !bytes.Equal(again.Serving.CertPEM, first.Serving.CertPEM) {
		t.Fatal("a stored, fresh pair was changed")
	}

	// Renewal time: the successor CA joins the bundle, the old pair is
	// still served.
	due := renewAt.Add(time.Minute)
	trust := mustPlan(t, first.Data, due)
	if !trust.Changed || certCount(trust.Bundle) != 2 || !bytes.Equal(trust.Serving.CertPEM, first.Serving.CertPEM) {
		t.Fatalf("renewal: changed %v, %d CAs, serving replaced %v", trust.Changed, certCount(trust.Bundle), !bytes.Equal(trust.Serving.CertPEM, first.Serving.CertPEM))
	}
	if !verifies(t, trust.Bundle, trust.Serving, due) {
		t.Fatal("the served certificate is not trusted by the widened bundle")
	}
	if want := due.Truncate(time.Second).Add(Overlap); !trust.NextCheck.Equal(want) {
		t.Errorf("next check %s, want the end of the overlap %s", trust.NextCheck, want)
	}
	if mid := mustPlan(t, trust.Data, due.Add(Overlap/2)); mid.Changed {
		t.Fatal("changed during the overlap")
	}

	// After the overlap the successor's certificate is served; the old CA
	// stays trusted until it ends.
	after := due.Add(Overlap + time.Second)
	promoted := mustPlan(t, trust.Data, after)
	if !promoted.Changed || bytes.Equal(promoted.Serving.CertPEM, first.Serving.CertPEM) || certCount(promoted.Bundle) != 2 {
		t.Fatalf("promotion: changed %v, %d CAs", promoted.Changed, certCount(promoted.Bundle))
	}
	if !verifies(t, promoted.Bundle, promoted.Serving, after) || !verifies(t, promoted.Bundle, first.Serving, after) {
		t.Fatal("the new bundle must trust both the new certificate and one a slow replica still serves")
	}
	if !verifies(t, trust.Bundle, promoted.Serving, after) {
		t.Fatal("an API server that still has the overlap bundle must trust the new certificate")
	}

	// Once the old CA ended it leaves the bundle.
	end := endOf(first.Data[keyCA]).Add(time.Second)
	if !promoted.NextCheck.Equal(endOf(first.Data[keyCA])) {
		t.Errorf("next check %s, want the old CA's end %s", promoted.NextCheck, endOf(first.Data[keyCA]))
	}
	settled := mustPlan(t, promoted.Data, end)
	if !settled.Changed || certCount(settled.Bundle) != 1 || !verifies(t, settled.Bundle, settled.Serving, end) {
		t.Fatalf("settled: changed %v, %d CAs", settled.Changed, certCount(settled.Bundle))
	}
}

func TestPlanCertificates_StartsOverOnWhatCannotBeServed(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	good := mustPlan(t, nil, t0).Data
	other := mustPlan(t, nil, t0).Data
	for name, data := range map[string]map[string][]byte{
		"garbage":                    {keyCA: []byte("x"), keyCAKey: []byte("y"), keyServing: []byte("z")},
		"serving signed by other CA": {keyCA: good[keyCA], keyCAKey: good[keyCAKey], keyServing: other[keyServing], keyServingKey: other[keyServingKey]},
		"no serving certificate":     {keyCA: good[keyCA], keyCAKey: good[keyCAKey]},
	} {
		t.Run(name, func(t *testing.T) {
			p := mustPlan(t, data, t0)
			if !p.Changed || !verifies(t, p.Bundle, p.Serving, t0) || bytes.Equal(p.Data[keyServing], other[keyServing]) {
				t.Fatal("not started over")
			}
		})
	}
	// Everything ended (a cluster left off for years).
	late := t0.Add(3 * 365 * 24 * time.Hour)
	p := mustPlan(t, good, late)
	if !p.Changed || !verifies(t, p.Bundle, p.Serving, late) {
		t.Fatal("ended certificates not replaced")
	}
}

// Only the serving certificate due (a CA that outlives it): it is reissued
// by the same CA, the bundle unchanged.
func TestPlanCertificates_ServingOnly(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ca, err := certs.NewCA(caCommonName, t0)
	if err != nil {
		t.Fatal(err)
	}
	// Issued a year earlier by a CA made now: valid, but due a year early.
	serving, err := certs.Issue(ca, svc, ns, t0.Add(-365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	data := map[string][]byte{keyCA: ca.CertPEM, keyCAKey: ca.KeyPEM, keyServing: serving.CertPEM, keyServingKey: serving.KeyPEM}
	renew, _ := certs.RenewAt(serving)
	p := mustPlan(t, data, renew.Add(time.Minute))
	if !p.Changed || bytes.Equal(p.Serving.CertPEM, serving.CertPEM) || !bytes.Equal(p.Bundle, ca.CertPEM) {
		t.Fatal("the serving certificate was not reissued by the same CA")
	}
}
