package client

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// A check's outcome: ok; warn (worth knowing, nothing a BundleDeployment
// needs is missing); fail (something a BundleDeployment needs is missing:
// check exits 1).
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// CheckResult is one line of `rukpak-kapp check`.
type CheckResult struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
	// Fix says what to do; empty when all is well.
	Fix string `json:"fix,omitempty"`
}

func ok(name, msg string) CheckResult { return CheckResult{Name: name, Status: CheckOK, Message: msg} }
func warn(name, msg, fix string) CheckResult {
	return CheckResult{Name: name, Status: CheckWarn, Message: msg, Fix: fix}
}
func fail(name, msg, fix string) CheckResult {
	return CheckResult{Name: name, Status: CheckFail, Message: msg, Fix: fix}
}

// evalCABundle says whether bundle (PEM) holds at least one certificate
// valid at now, for the webhook of what.
func evalCABundle(name, what string, bundle []byte, now time.Time) CheckResult {
	fix := "the adapter writes its CA there at start and whenever it changes: check that an adapter replica runs"
	if len(bundle) == 0 {
		return fail(name, what+" has no caBundle, so the API server cannot trust the adapter's webhook", fix)
	}
	var valid, expired int
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue
		}
		if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
			expired++
			continue
		}
		valid++
	}
	switch {
	case valid > 0:
		return ok(name, fmt.Sprintf("%s trusts %d valid certificate(s)", what, valid))
	case expired > 0:
		return fail(name, fmt.Sprintf("every certificate in the caBundle of %s is outside its validity", what), fix)
	}
	return fail(name, "the caBundle of "+what+" holds no certificate", fix)
}

// evalLease says whether an adapter replica holds the leader lease: held,
// and renewed within twice its duration.
func evalLease(holder string, renewed *metav1.MicroTime, durationSeconds *int32, now time.Time) CheckResult {
	const name = "adapter leader"
	fix := "the adapter's replicas elect a leader among themselves: check the Deployment's pods and their logs"
	if holder == "" || renewed == nil {
		return fail(name, "no adapter replica holds the leader lease, so no BundleDeployment is reconciled", fix)
	}
	d := 15 * time.Second
	if durationSeconds != nil {
		d = time.Duration(*durationSeconds) * time.Second
	}
	if age := now.Sub(renewed.Time); age > 2*d {
		return fail(name, fmt.Sprintf("the leader lease of %s was last renewed %s ago (lease %s): the leader is gone", holder, age.Round(time.Second), d), fix)
	}
	return ok(name, "held by "+holder)
}

// evalBundleDeployments sums up the BundleDeployments rukpak-kapp reports
// on, by the reason of those not installed.
func evalBundleDeployments(bds []rukpakv1alpha2.BundleDeployment) CheckResult {
	const name = "BundleDeployments"
	byReason := map[string][]string{}
	installed := 0
	for _, bd := range bds {
		var c *metav1.Condition
		for i := range bd.Status.Conditions {
			if bd.Status.Conditions[i].Type == rukpakv1alpha2.TypeInstalled {
				c = &bd.Status.Conditions[i]
			}
		}
		switch {
		case c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == bd.Generation:
			installed++
		case c == nil:
			byReason["no Installed condition yet"] = append(byReason["no Installed condition yet"], bd.Name)
		case c.Status == metav1.ConditionTrue:
			// Installed at an earlier generation; the current one is under way.
			byReason["a new generation under way"] = append(byReason["a new generation under way"], bd.Name)
		default:
			byReason[c.Reason] = append(byReason[c.Reason], bd.Name)
		}
	}
	if len(byReason) == 0 {
		return ok(name, fmt.Sprintf("%d of %d installed", installed, len(bds)))
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var parts []string
	for _, r := range reasons {
		names := byReason[r]
		sort.Strings(names)
		example := names[0]
		if len(names) > 1 {
			example += ", …"
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", len(names), r, example))
	}
	return warn(name, fmt.Sprintf("%d of %d installed; not installed: %s", installed, len(bds), strings.Join(parts, "; ")),
		"kubectl get bundledeployment NAME -o yaml: each condition's message says what to do")
}

// decodeBase64 reads a caBundle as unstructured JSON holds it.
func decodeBase64(s string) []byte {
	out, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return out
}
