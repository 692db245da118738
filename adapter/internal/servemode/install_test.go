package servemode

import (
	"context"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// packagingCalls counts the calls that read or write kapp-controller's
// packaging API (Packages and PackageMetadata, an aggregated API).
func packagingCalls(k *fakekube.Cluster) int {
	return k.Count("", "", "Package") + k.Count("", "", "PackageMetadata")
}

// The serve mode publishes, mirrors, hands the App mode's App over to the
// PackageInstall and applies the PackageInstall, in that order; what it
// published for a template it does not read or write again.
func TestInstallPublishesOnceAndInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, m, bd := appModeInstalled(t)
	o := m.Install(ctx, scopeOf(t, k, bd))
	if o.Err != nil || o.Retry != nil {
		t.Fatalf("Install: %+v", o)
	}
	pkg, meta := packaging.PackageName(packaging.RefName(bd.Name), "1.0.0"), packaging.RefName(bd.Name)
	order := []int{
		k.Index(fakekube.Create, "PackageMetadata", meta),
		k.Index(fakekube.Create, "Package", pkg),
		k.Index(fakekube.Create, "Secret", "pull"),
		k.Index(fakekube.Patch, "App", bd.Name),
		k.Index(fakekube.Apply, "PackageInstall", bd.Name),
	}
	for i := range order {
		if order[i] < 0 || i > 0 && order[i] < order[i-1] {
			t.Fatalf("writes %v: want PackageMetadata and Package published, the pull Secret mirrored, the App handed over, then the PackageInstall applied", k.Wrote())
		}
	}
	if n := k.Count(fakekube.ViaClient, fakekube.Get, "Package") + k.Count(fakekube.ViaClient, fakekube.Get, "PackageMetadata"); n != 0 {
		t.Errorf("%d reads of the packaging API went through the informer cache, which does not hold it", n)
	}
	app := &kappctrlv1alpha1.App{}
	if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: appNS, Name: bd.Name}, app); err != nil {
		t.Fatal(err)
	}
	if metav1.IsControlledBy(app, bd) || len(app.OwnerReferences) != 0 {
		t.Errorf("the App is still owned: %v", app.OwnerReferences)
	}
	if _, ok := app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration]; ok {
		t.Error("the handed-over App still records what the App mode made it from")
	}
	pi := &packagingv1alpha1.PackageInstall{}
	if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: appNS, Name: bd.Name}, pi); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(pi, bd) || pi.Spec.PackageRef.RefName != meta {
		t.Errorf("PackageInstall owners %v, packageRef %+v", pi.OwnerReferences, pi.Spec.PackageRef)
	}

	k.Reset()
	for range 2 {
		if o := m.Install(ctx, scopeOf(t, k, bd)); o.Err != nil || o.Retry != nil {
			t.Fatalf("Install again: %+v", o)
		}
	}
	if n := packagingCalls(k); n != 0 {
		t.Errorf("an unchanged install made %d calls to the packaging API: %v", n, k.Calls())
	}
	if got := k.Wrote(); len(got) != 0 {
		t.Errorf("an unchanged install wrote %v", got)
	}
}

// Forget drops both memories: the next install reads what is published
// again, and removes what is superseded again once deployed.
func TestForgetDropsWhatIsRemembered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, m, bd := appModeInstalled(t)
	if o := m.Install(ctx, scopeOf(t, k, bd)); o.Err != nil {
		t.Fatal(o.Err)
	}
	deployedAs(t, k, bd.Name, "1.0.0")
	if o := m.Install(ctx, scopeOf(t, k, bd)); o.Err != nil || o.Retry != nil {
		t.Fatalf("Install: %+v", o)
	}
	if !m.published.Remembers(bd.Name) || !m.pruned.Remembers(bd.Name) {
		t.Fatalf("after a deployed install: published %v, pruned %v", m.published.Remembers(bd.Name), m.pruned.Remembers(bd.Name))
	}
	k.Reset()
	if o := m.Install(ctx, scopeOf(t, k, bd)); o.Err != nil || packagingCalls(k) != 0 {
		t.Fatalf("remembered: %+v, calls %v", o, k.Calls())
	}

	m.Forget(bd.Name, bd.UID)
	if m.published.Remembers(bd.Name) || m.pruned.Remembers(bd.Name) {
		t.Fatal("Forget kept a memory")
	}
	k.Reset()
	if o := m.Install(ctx, scopeOf(t, k, bd)); o.Err != nil {
		t.Fatal(o.Err)
	}
	if k.Count(fakekube.ViaDirect, fakekube.Get, "Package") == 0 || k.Count(fakekube.ViaDirect, fakekube.List, "Package") == 0 {
		t.Errorf("after Forget the install neither read the Package nor listed the superseded ones: %v", k.Calls())
	}
}
