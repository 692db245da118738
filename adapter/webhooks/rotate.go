package webhooks

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

// Keys of the certificate Secret.
const (
	keyCA          = "ca.crt"
	keyCAKey       = "ca.key"
	keyServing     = "tls.crt"
	keyServingKey  = "tls.key"
	keyNextCA      = "ca-next.crt"
	keyNextCAKey   = "ca-next.key"
	keyNextSince   = "ca-next.since"
	keyPreviousCA  = "ca-previous.crt"
	caCommonName   = "rukpak-kapp webhook CA"
	sinceTimestamp = time.RFC3339
)

// Overlap is how long a new CA is trusted (in every caBundle) before the
// serving certificate it signs is served: long enough for every API
// server to have read the new caBundle, which it watches.
const Overlap = time.Hour

// Plan is what the certificate Secret should hold now.
type Plan struct {
	Data map[string][]byte
	// Changed says Data differs from what was stored.
	Changed bool
	// Bundle is the caBundle every target must carry: the current CA, and
	// during a rotation the next or the previous one.
	Bundle []byte
	// Serving is the certificate to serve.
	Serving certs.Pair
	// NextCheck is when the plan may change without anything else changing.
	NextCheck time.Time
}

// PlanCertificates decides the certificate Secret's data at now: a CA and a
// serving certificate for the Service's DNS names, renewed well before
// they end (certs.RenewBefore), the CA with an overlap: a new CA joins the
// caBundle first and signs the served certificate only Overlap later, and
// the old CA stays in the caBundle until it ends. Every replica runs this
// on the same Secret and reaches the same plan, so whichever writes first
// wins and the others find nothing left to do.
func PlanCertificates(stored map[string][]byte, service, namespace string, now time.Time) (Plan, error) {
	data := maps.Clone(stored)
	if data == nil {
		data = map[string][]byte{}
	}
	ca := certs.Pair{CertPEM: data[keyCA], KeyPEM: data[keyCAKey]}
	serving := certs.Pair{CertPEM: data[keyServing], KeyPEM: data[keyServingKey]}
	if !usable(ca, now) || !usable(serving, now) || !certs.Signs(ca, serving) {
		// A first start, or what is stored cannot be served: start over.
		// Nothing trusted the lost pair, or it has ended.
		var err error
		if ca, err = certs.NewCA(caCommonName, now); err != nil {
			return Plan{}, err
		}
		if serving, err = certs.Issue(ca, service, namespace, now); err != nil {
			return Plan{}, err
		}
		for _, k := range []string{keyNextCA, keyNextCAKey, keyNextSince} {
			delete(data, k)
		}
		setPair(data, keyCA, keyCAKey, ca)
		setPair(data, keyServing, keyServingKey, serving)
	}
	next := certs.Pair{CertPEM: data[keyNextCA], KeyPEM: data[keyNextCAKey]}
	since, sinceErr := time.Parse(sinceTimestamp, string(data[keyNextSince]))
	hasNext := usable(next, now) && sinceErr == nil
	switch {
	case !certs.Fresh(ca, now) && !hasNext:
		// The CA ends soon: trust its successor first.
		var err error
		if next, err = certs.NewCA(caCommonName, now); err != nil {
			return Plan{}, err
		}
		setPair(data, keyNextCA, keyNextCAKey, next)
		data[keyNextSince] = []byte(now.UTC().Format(sinceTimestamp))
		since, hasNext = now.UTC().Truncate(time.Second), true
	case hasNext && !now.Before(since.Add(Overlap)):
		// Every API server trusts the successor by now: serve from it.
		issued, err := certs.Issue(next, service, namespace, now)
		if err != nil {
			return Plan{}, err
		}
		data[keyPreviousCA] = ca.CertPEM
		ca, serving, hasNext = next, issued, false
		setPair(data, keyCA, keyCAKey, ca)
		setPair(data, keyServing, keyServingKey, serving)
		for _, k := range []string{keyNextCA, keyNextCAKey, keyNextSince} {
			delete(data, k)
		}
	case !certs.Fresh(serving, now) && certs.Fresh(ca, now):
		// Only the serving certificate ends soon: the CA signs a new one.
		issued, err := certs.Issue(ca, service, namespace, now)
		if err != nil {
			return Plan{}, err
		}
		serving = issued
		setPair(data, keyServing, keyServingKey, serving)
	}
	if prev, ok := data[keyPreviousCA]; ok && !endsAfter(prev, now) {
		delete(data, keyPreviousCA)
	}

	plan := Plan{Data: data, Changed: !equalData(stored, data), Serving: serving}
	plan.Bundle = append(plan.Bundle, ca.CertPEM...)
	if hasNext {
		plan.Bundle = append(plan.Bundle, next.CertPEM...)
		plan.NextCheck = since.Add(Overlap)
	}
	if prev, ok := data[keyPreviousCA]; ok {
		plan.Bundle = append(plan.Bundle, prev...)
		plan.NextCheck = earliest(plan.NextCheck, endOf(prev))
	}
	// During a rotation the current pair is already due; the overlap's end
	// is what comes next.
	for _, p := range []certs.Pair{ca, serving} {
		if at, ok := certs.RenewAt(p); ok && at.After(now) {
			plan.NextCheck = earliest(plan.NextCheck, at)
		}
	}
	if !plan.NextCheck.After(now) {
		return plan, fmt.Errorf("certificate plan at %s is due again at once (%s): the clock or the stored certificates are off", now, plan.NextCheck)
	}
	return plan, nil
}

// usable says p's certificate and key parse and the certificate has not
// ended.
func usable(p certs.Pair, now time.Time) bool {
	_, ok := certs.RenewAt(p)
	return ok && endsAfter(p.CertPEM, now)
}

func endsAfter(certPEM []byte, now time.Time) bool {
	end := endOf(certPEM)
	return !end.IsZero() && now.Before(end)
}

// endOf is when a PEM certificate ends; zero when it does not parse.
func endOf(certPEM []byte) time.Time {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return time.Time{}
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return time.Time{}
	}
	return cert.NotAfter
}

func setPair(data map[string][]byte, certKey, keyKey string, p certs.Pair) {
	data[certKey], data[keyKey] = p.CertPEM, p.KeyPEM
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

func equalData(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}
