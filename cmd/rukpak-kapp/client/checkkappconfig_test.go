package client

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/kappconfig"
	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

func TestEvalKappConfig(t *testing.T) {
	ca, err := certs.NewCA("check test CA", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{"caCerts": string(ca.CertPEM), "httpsProxy": "http://user:s3cret@proxy.corp:3128"}
	base := kappConfigFacts{kappNamespace: "kapp-controller", adapterNamespace: "kapp-controller", flagKnown: true, readable: true,
		config: kappconfig.Config{Kind: "Secret", Namespace: "kapp-controller", Data: good}}
	with := func(change func(*kappConfigFacts)) kappConfigFacts {
		f := base
		change(&f)
		return f
	}
	for _, tt := range []struct {
		name string
		f    kappConfigFacts
		want string
		says []string
	}{
		{"both follow the Secret", base, CheckOK, []string{"follow the Secret kapp-controller/kapp-controller-config", "caCerts, httpsProxy"}},
		{"the Secret wins over the ConfigMap", with(func(f *kappConfigFacts) { f.config.ConfigMapIgnored = true }), CheckOK, []string{"ConfigMap of that name is ignored"}},
		{"the adapter reads another namespace", with(func(f *kappConfigFacts) { f.kappNamespace = "carvel" }), CheckFail, []string{"kapp-controller runs in carvel, the adapter reads", "--kapp-controller-namespace=carvel"}},
		{"an adapter without a Deployment: its flag is unknown", with(func(f *kappConfigFacts) { f.kappNamespace, f.flagKnown = "carvel", false }), CheckWarn, []string{"run it with --kapp-controller-namespace=carvel"}},
		{"the adapter reads none", with(func(f *kappConfigFacts) { f.adapterNamespace = "" }), CheckFail, []string{"the adapter none", "--kapp-controller-namespace=kapp-controller"}},
		{"the adapter may not read it", with(func(f *kappConfigFacts) { f.readable = false }), CheckFail, []string{"may not read", "config/rbac"}},
		{"the adapter refuses what kapp-controller takes", with(func(f *kappConfigFacts) { f.config.Data = map[string]string{"caCerts": "garbage"} }), CheckFail,
			[]string{"the Secret kapp-controller/kapp-controller-config, which the adapter's fetches follow as kapp-controller's do, cannot be used: caCerts holds no PEM certificate: every fetch"}},
		{"none, the same environments", with(func(f *kappConfigFacts) { f.config = kappconfig.Config{} }), CheckOK, []string{"none in kapp-controller"}},
		{"none, different proxies", with(func(f *kappConfigFacts) {
			f.config = kappconfig.Config{}
			f.adapterEnv = map[string]string{"HTTPS_PROXY": "http://user:s3cret@proxy:3128"}
		}), CheckWarn, []string{"they differ: HTTPS_PROXY", "in a Secret kapp-controller-config in kapp-controller"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := evalKappConfig(tt.f)
			if r.Status != tt.want || (r.Status != CheckOK && r.Fix == "") {
				t.Fatalf("%+v, want %s", r, tt.want)
			}
			for _, s := range tt.says {
				if !strings.Contains(r.Message+" fix: "+r.Fix, s) {
					t.Errorf("%+v does not say %q", r, s)
				}
			}
			if strings.Contains(r.Message+r.Fix, "s3cret") {
				t.Errorf("%+v repeats a credential", r)
			}
		})
	}
}

func TestKappControllerNamespaceOf(t *testing.T) {
	dep := func(args ...string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", Args: args, Env: []corev1.EnvVar{{Name: "https_proxy", Value: "low"}, {Name: "HTTPS_PROXY", Value: "up"}}}}
		return d
	}
	for _, tt := range []struct {
		d    *appsv1.Deployment
		want string
	}{
		{nil, "kapp-controller"},
		{dep("run", "--leader-elect"), "kapp-controller"},
		{dep("run", "--kapp-controller-namespace=carvel"), "carvel"},
		{dep("run", "--kapp-controller-namespace", "carvel"), "carvel"},
		{dep("run", "--kapp-controller-namespace="), ""},
	} {
		if got := kappControllerNamespaceOf(tt.d); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := proxyEnv(dep())["HTTPS_PROXY"]; got != "up" {
		t.Errorf("HTTPS_PROXY %q: the upper-case name wins, as Go reads it", got)
	}
}
