package bundledeployment

import (
	"context"
	"errors"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// failingGets is a client whose every read fails.
func failingGets(t *testing.T) client.Client {
	return fake.NewClientBuilder().WithScheme(testScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		}}).Build()
}

func TestPlacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spread := translate.Config{SystemNamespace: "rukpak-system", AppNamespaces: []string{"apps-0", "apps-1"}}

	t.Run("without app namespaces every App is in the system namespace, and nothing is read or remembered", func(t *testing.T) {
		t.Parallel()
		var p placement
		ns, err := p.place(ctx, failingGets(t), failingGets(t), translate.Config{SystemNamespace: "rukpak-system"}, "web", true)
		if err != nil || ns != "rukpak-system" || p.Remembers("web") {
			t.Fatalf("place = %q, %v (remembered %t)", ns, err, p.Remembers("web"))
		}
	})

	t.Run("an App that exists stays where it is, wherever the hash would put a new one", func(t *testing.T) {
		t.Parallel()
		var p placement
		want := translate.Placement(spread, "web")
		elsewhere := "rukpak-system"
		if want == elsewhere {
			t.Fatal("the test needs a name the hash puts in an app namespace")
		}
		gets := 0
		c := fake.NewClientBuilder().WithScheme(testScheme(t)).
			WithObjects(&kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: "web"}}).
			WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
				gets++
				return c.Get(ctx, k, o, opts...)
			}}).Build()
		for range 2 {
			ns, err := p.place(ctx, c, failingGets(t), spread, "web", true)
			if err != nil || ns != elsewhere {
				t.Fatalf("place = %q, %v; want %q", ns, err, elsewhere)
			}
		}
		if gets != 1 {
			t.Errorf("%d reads for two placements: the answer is not remembered", gets)
		}
		p.Forget("web", "")
		if p.Remembers("web") {
			t.Error("Forget left the placement")
		}
	})

	t.Run("a new App goes where the hash puts it", func(t *testing.T) {
		t.Parallel()
		var p placement
		c := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
		ns, err := p.place(ctx, c, c, spread, "web", true)
		if err != nil || ns != translate.Placement(spread, "web") {
			t.Fatalf("place = %q, %v; want %q", ns, err, translate.Placement(spread, "web"))
		}
	})

	t.Run("without kapp-controller's API nothing is read or remembered", func(t *testing.T) {
		t.Parallel()
		var p placement
		ns, err := p.place(ctx, failingGets(t), failingGets(t), spread, "web", false)
		if err != nil || ns != translate.Placement(spread, "web") || p.Remembers("web") {
			t.Fatalf("place = %q, %v (remembered %t); want %q, not remembered", ns, err, p.Remembers("web"), translate.Placement(spread, "web"))
		}
	})

	t.Run("a failed read is an error, not a guess", func(t *testing.T) {
		t.Parallel()
		var p placement
		if ns, err := p.place(ctx, failingGets(t), nil, spread, "web", true); err == nil || p.Remembers("web") {
			t.Fatalf("place = %q, %v; want an error and nothing remembered", ns, err)
		}
	})

	t.Run("an App the cache has not shown yet is found through the API server, and stays where it is", func(t *testing.T) {
		t.Parallel()
		var p placement
		elsewhere := "rukpak-system"
		if translate.Placement(spread, "web") == elsewhere {
			t.Fatal("the test needs a name the hash puts in an app namespace")
		}
		behind := fake.NewClientBuilder().WithScheme(testScheme(t)).Build()
		server := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(&kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhere, Name: "web"}}).Build()
		if ns, err := p.place(ctx, behind, server, spread, "web", true); err != nil || ns != elsewhere {
			t.Fatalf("place = %q, %v; want %q, where the App is", ns, err, elsewhere)
		}
	})
}
