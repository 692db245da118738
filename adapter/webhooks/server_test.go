package webhooks

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const testNS = "rukpak-system"

func vwc() *admissionregistrationv1.ValidatingWebhookConfiguration {
	svc := &admissionregistrationv1.ServiceReference{Namespace: testNS, Name: DefaultService}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "rukpak-kapp"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "crds.rukpak-kapp.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: svc},
			SideEffects: ptr(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}}}
}

func ptr[T any](v T) *T { return &v }

// writes counts the writes through a fake client.
type writes struct{ creates, updates int }

func fakeCluster(t *testing.T, w *writes, objs ...client.Object) client.Client {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			w.creates++
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			w.updates++
			return c.Update(ctx, o, opts...)
		},
	}).Build()
}

func TestServerSyncMakesServesAndInjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := &writes{}
	c := fakeCluster(t, w, vwc())
	s := &Server{opts: DefaultOptions(":0", testNS), kick: make(chan struct{}, 1)}
	if _, err := s.certificate(nil); err == nil {
		t.Fatal("a certificate is served before one was made")
	}
	next, err := s.sync(ctx, c, c, []Target{ValidatingWebhookConfiguration("rukpak-kapp")})
	if err != nil {
		t.Fatal(err)
	}
	if w.creates != 1 || w.updates != 1 {
		t.Fatalf("first sync: %d creates, %d updates; want the Secret made and the caBundle written", w.creates, w.updates)
	}
	if !next.After(time.Now()) {
		t.Errorf("next check %v is not in the future", next)
	}

	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: testNS, Name: DefaultSecret}, secret); err != nil {
		t.Fatal(err)
	}
	live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: "rukpak-kapp"}, live); err != nil {
		t.Fatal(err)
	}
	// The served certificate is for the Service, and the caBundle trusts it.
	served, err := s.certificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(served.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(live.Webhooks[0].ClientConfig.CABundle) {
		t.Fatalf("caBundle holds no certificate: %q", live.Webhooks[0].ClientConfig.CABundle)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: DefaultService + "." + testNS + ".svc"}); err != nil {
		t.Fatalf("the served certificate does not verify against the caBundle: %v", err)
	}
	if block, _ := pem.Decode(secret.Data[corev1.TLSCertKey]); block == nil {
		t.Error("the Secret holds no serving certificate")
	}

	// At rest nothing is written again.
	*w = writes{}
	if _, err := s.sync(ctx, c, c, []Target{ValidatingWebhookConfiguration("rukpak-kapp")}); err != nil || *w != (writes{}) {
		t.Fatalf("a second sync: %v, wrote %+v", err, *w)
	}
}

func TestServerSyncLetsAnotherReplicaWinTheSecret(t *testing.T) {
	t.Parallel()
	w := &writes{}
	base := fakeCluster(t, w)
	// Another replica made the Secret between the read and the create.
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, DefaultSecret)
		},
	})
	s := &Server{opts: DefaultOptions(":0", testNS), kick: make(chan struct{}, 1)}
	next, err := s.sync(context.Background(), c, c, nil)
	if err != nil {
		t.Fatalf("sync: %v, want no error: the watch brings the other replica's Secret", err)
	}
	if d := time.Until(next); d <= 0 || d > 2*time.Second {
		t.Errorf("next look in %v, want about a second", d)
	}
	if _, err := s.certificate(nil); err == nil {
		t.Error("a certificate that was never stored is served")
	}
}
