package client

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

func TestEvalCABundle(t *testing.T) {
	now := time.Now()
	ca, err := certs.NewCA("check test CA", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		bundle []byte
		at     time.Time
		want   string
		says   string
	}{
		{"valid", ca.CertPEM, now, CheckOK, "1 valid certificate"},
		{"expired", ca.CertPEM, now.Add(20 * 365 * 24 * time.Hour), CheckFail, "outside its validity"},
		{"empty", nil, now, CheckFail, "has no caBundle"},
		{"no certificate", []byte("not pem"), now, CheckFail, "holds no certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := evalCABundle("ca", "the webhook", tt.bundle, tt.at)
			if r.Status != tt.want || !strings.Contains(r.Message, tt.says) || (r.Status != CheckOK && r.Fix == "") {
				t.Errorf("%+v", r)
			}
		})
	}
}

func TestEvalLease(t *testing.T) {
	now := time.Now()
	at := func(ago time.Duration) *metav1.MicroTime { m := metav1.NewMicroTime(now.Add(-ago)); return &m }
	d := int32(15)
	for _, tt := range []struct {
		name    string
		holder  string
		renewed *metav1.MicroTime
		want    string
	}{
		{"held", "pod-a", at(5 * time.Second), CheckOK},
		{"stale", "pod-a", at(time.Minute), CheckFail},
		{"never held", "", nil, CheckFail},
	} {
		if r := evalLease(tt.holder, tt.renewed, &d, now); r.Status != tt.want {
			t.Errorf("%s: %+v", tt.name, r)
		}
	}
}

func TestEvalBundleDeployments(t *testing.T) {
	bd := func(name string, gen int64, status metav1.ConditionStatus, reason string, observed int64) rukpakv1alpha2.BundleDeployment {
		b := rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: gen}}
		if reason != "" {
			b.Status.Conditions = []metav1.Condition{{Type: rukpakv1alpha2.TypeInstalled, Status: status, Reason: reason, ObservedGeneration: observed}}
		}
		return b
	}
	all := evalBundleDeployments([]rukpakv1alpha2.BundleDeployment{bd("a", 1, "True", "InstallationSucceeded", 1)})
	if all.Status != CheckOK || all.Message != "1 of 1 installed" {
		t.Errorf("%+v", all)
	}
	mixed := evalBundleDeployments([]rukpakv1alpha2.BundleDeployment{
		bd("a", 1, "True", "InstallationSucceeded", 1),
		bd("b", 2, "True", "InstallationSucceeded", 1), // generation 2 not installed yet
		bd("c", 1, "False", "InstallFailed", 1),
		bd("d", 1, "False", "InstallFailed", 1),
		bd("e", 1, "", "", 0),
	})
	want := "1 of 5 installed; not installed: 2 InstallFailed (c, …); 1 a new generation under way (b); 1 no Installed condition yet (e)"
	if mixed.Status != CheckWarn || mixed.Message != want {
		t.Errorf("got %q, want %q", mixed.Message, want)
	}
}
