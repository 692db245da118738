package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func certSecret(t *testing.T, c client.Reader, bd string) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: systemNS, Name: certSecretName(bd)}, secret); err != nil {
		t.Fatalf("webhook certificate Secret: %v", err)
	}
	return secret
}

// servingPrefixes are the "<namespace>.<service>" of the serving
// certificates in secret.
func servingPrefixes(secret *corev1.Secret) []string {
	var out []string
	for k := range secret.Data {
		if p, ok := strings.CutSuffix(k, ".crt"); ok && p != "ca" {
			out = append(out, p)
		}
	}
	return out
}

// A registry+v1 bundle's webhook certificates are stored before any
// content that names them, reused while fresh (so the content is
// byte-stable and nothing is written), and renewed, with a new fetch,
// once due; a restarted adapter sees a due certificate from the Secret.
func TestGatherKeepsWebhookCertificates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := fakekube.New(nil)
	apis := &fakeAPIs{}
	apis.serve(argoApplication)
	fetcher := &fakeFetcher{files: webhookBundle(t)}
	s := New(k.Client, testCfg, fetcher, apis)
	bd := registryBD("hooks")

	sc := scopeOf(bd)
	first, o, stop := s.Gather(ctx, sc)
	timer, err := o.Timer, o.Err
	if err != nil || stop {
		t.Fatalf("Gather: stop %v, err %v, failure %+v", stop, err, o.Failure)
	}
	saved := k.Index(fakekube.Create, "Secret", certSecretName(bd.Name))
	if saved < 0 {
		t.Fatalf("no webhook certificate Secret was created: %v", k.Writes())
	}
	for _, name := range names(first) {
		if i := k.Index(fakekube.Create, "Secret", name); i < saved {
			t.Errorf("content Secret %s created at write %d, before the certificates it holds (write %d)", name, i, saved)
		}
	}
	stored := certSecret(t, k.Raw, bd.Name)
	prefixes := servingPrefixes(stored)
	if len(stored.Data["ca.crt"]) == 0 || len(prefixes) == 0 {
		t.Fatalf("certificate Secret keys %v, want a CA and a serving certificate", keys(stored))
	}
	if lo := certs.Validity - certs.RenewBefore - time.Hour; timer < lo || timer > certs.Validity {
		t.Errorf("look again after %v, want about when the certificates are due (%v)", timer, certs.Validity-certs.RenewBefore)
	}

	// While fresh: the same content again, nothing fetched or written,
	// after a restart too.
	writeApp(t, k.Raw, bd, first)
	k.Reset()
	fresh := &fakeFetcher{files: webhookBundle(t)}
	again, _, _ := gather(t, New(k.Client, testCfg, fresh, apis), bd)
	if fresh.fetches != 0 || !cmp.Equal(names(again), names(first)) {
		t.Errorf("fresh certificates after a restart: %d fetches, secrets %v, want none and %v", fresh.fetches, names(again), names(first))
	}
	k.ExpectWrites(t, "a reconcile with fresh certificates")

	// Make every stored certificate one that is due.
	issued := time.Now().Add(-certs.Validity + certs.RenewBefore/2)
	ca, err := certs.NewCA("old CA", issued)
	if err != nil {
		t.Fatal(err)
	}
	due := stored.DeepCopy()
	due.Data = map[string][]byte{"ca.crt": ca.CertPEM, "ca.key": ca.KeyPEM}
	for _, p := range prefixes {
		ns, service, _ := strings.Cut(p, ".")
		pair, err := certs.Issue(ca, service, ns, issued)
		if err != nil {
			t.Fatal(err)
		}
		due.Data[p+".crt"], due.Data[p+".key"] = pair.CertPEM, pair.KeyPEM
	}
	if err := k.Raw.Update(ctx, due); err != nil {
		t.Fatal(err)
	}

	k.Reset()
	renewing := &fakeFetcher{files: webhookBundle(t)}
	renewed, _, stop := gather(t, New(k.Client, testCfg, renewing, apis), bd)
	if renewing.fetches != 1 || stop {
		t.Fatalf("due certificates: %d fetches, stop %v, want a fetch", renewing.fetches, stop)
	}
	updated := k.Index(fakekube.Update, "Secret", certSecretName(bd.Name))
	if updated < 0 {
		t.Fatalf("the due certificates were not renewed: writes %v", k.Writes())
	}
	if cmp.Equal(names(renewed), names(first)) {
		t.Fatal("renewed certificates left the content as it was")
	}
	for _, name := range names(renewed) {
		if i := k.Index(fakekube.Create, "Secret", name); i >= 0 && i < updated {
			t.Errorf("content Secret %s created before its renewed certificates were stored", name)
		}
	}
	now := certSecret(t, k.Raw, bd.Name)
	if !certs.Fresh(certs.Pair{CertPEM: now.Data["ca.crt"], KeyPEM: now.Data["ca.key"]}, time.Now()) {
		t.Error("the stored CA is not fresh after the renewal")
	}
}

func keys(s *corev1.Secret) []string {
	var out []string
	for k := range s.Data {
		out = append(out, k)
	}
	return out
}
