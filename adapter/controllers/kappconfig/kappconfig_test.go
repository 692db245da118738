package kappconfig

import (
	"context"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// TestWatcher steps through what kapp-controller reads, in its order: the
// Secret wins over the ConfigMap, the ConfigMap stands alone, neither is
// the environment; only a change wakes what failed.
func TestWatcher(t *testing.T) {
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "kapp-controller", Name: fetch.KappControllerConfigName}
	meta := metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
	c := fake.NewClientBuilder().Build()
	holder := &fetch.NetworkHolder{}
	woken := 0
	w := New(c, key.Namespace, "10.96.0.1", holder, func(context.Context) error { woken++; return nil })
	proxyOf := func() string {
		u, _ := url.Parse("https://git.corp/r.git")
		p, err := holder.Load().ProxyFor(u)
		if err != nil || p == nil {
			return ""
		}
		return p.Host
	}
	step := func(name string, change func(), wantNil bool, wantProxy string, wantWoken int) {
		t.Helper()
		change()
		if _, err := w.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := holder.Load() == nil; got != wantNil {
			t.Fatalf("%s: network nil %v, want %v", name, got, wantNil)
		}
		if !wantNil && proxyOf() != wantProxy {
			t.Fatalf("%s: proxy %q, want %q", name, proxyOf(), wantProxy)
		}
		if woken != wantWoken {
			t.Fatalf("%s: woke %d times, want %d", name, woken, wantWoken)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"httpsProxy": "http://from-configmap:3128"}}
	secret := &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"httpsProxy": []byte("http://from-secret:3128")}}
	step("neither: the environment", func() {}, true, "", 0)
	step("the ConfigMap alone", func() { must(t, c.Create(ctx, cm)) }, false, "from-configmap:3128", 1)
	step("the same again wakes nothing", func() {}, false, "from-configmap:3128", 1)
	step("the Secret wins", func() { must(t, c.Create(ctx, secret)) }, false, "from-secret:3128", 2)
	step("an empty proxy is none, not the environment's", func() {
		secret.Data = map[string][]byte{"noProxy": []byte("x")}
		must(t, c.Update(ctx, secret))
	}, false, "", 3)
	step("the Secret gone: the ConfigMap again", func() { must(t, c.Delete(ctx, secret)) }, false, "from-configmap:3128", 4)
	step("both gone: the environment", func() { must(t, c.Delete(ctx, cm)) }, true, "", 5)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
