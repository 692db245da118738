package bundledeployment

import (
	"context"
	"slices"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// names are the BundleDeployments reqs name, sorted.
func names(reqs []reconcile.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

func TestOwnerOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{name: "installed by a BundleDeployment", labels: map[string]string{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: "web"}, want: []string{"web"}},
		{name: "no labels", want: nil},
		{name: "another owner kind", labels: map[string]string{rukpakv1alpha2.LabelOwnerKind: "Operator", rukpakv1alpha2.LabelOwnerName: "web"}, want: nil},
		{name: "the kind without a name", labels: map[string]string{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind}, want: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "d", Labels: tt.labels}}
			if got := names(ownerOf(context.Background(), d)); !slices.Equal(got, tt.want) {
				t.Fatalf("ownerOf = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPackageInstallApp(t *testing.T) {
	t.Parallel()
	yes := true
	controlled := func(apiVersion, kind string) *kappctrlv1alpha1.App {
		return &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "rukpak-system", Name: "web",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "web", UID: "u", Controller: &yes}}}}
	}
	if got := names(packageInstallApp(context.Background(), controlled(packagingv1alpha1.SchemeGroupVersion.String(), "PackageInstall"))); !slices.Equal(got, []string{"web"}) {
		t.Errorf("the App of a PackageInstall maps to %v, want [web]", got)
	}
	for _, app := range []*kappctrlv1alpha1.App{
		controlled(rukpakv1alpha2.GroupVersion.String(), "BundleDeployment"),
		controlled("example.com/v1", "PackageInstall"),
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}},
	} {
		if got := packageInstallApp(context.Background(), app); got != nil {
			t.Errorf("an App not controlled by a PackageInstall (%v) maps to %v", app.OwnerReferences, got)
		}
	}
}

// configMapBD is a BundleDeployment whose source is ConfigMaps, which the
// adapter fetches itself.
func configMapBD(name, class string, configMaps ...string) *rukpakv1alpha2.BundleDeployment {
	bd := newBD(name, class)
	bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps}
	for _, cm := range configMaps {
		bd.Spec.Source.ConfigMaps = append(bd.Spec.Source.ConfigMaps, rukpakv1alpha2.ConfigMapSource{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: cm}})
	}
	return bd
}

func TestBundlesReading(t *testing.T) {
	t.Parallel()
	classes, err := ParseClasses([]string{rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassRegistry, "kapp-registry=" + rukpakv1alpha2.ClassRegistry})
	if err != nil {
		t.Fatal(err)
	}
	r := &BundleDeploymentReconciler{set: Settings{Config: translate.Config{SystemNamespace: "rukpak-system"}, Classes: classes}}
	objs := []client.Object{
		configMapBD("reads-a", rukpakv1alpha2.ClassRegistry, "a", "b"),
		configMapBD("alias-reads-a", "kapp-registry", "a"),
		configMapBD("reads-b", rukpakv1alpha2.ClassRegistry, "b"),
		// Not the adapter's: never woken by its ConfigMaps.
		configMapBD("other-class", "core-rukpak-io-helm", "a"),
		// kapp-controller fetches a plain bundle's ConfigMaps itself, and
		// watches them.
		configMapBD("plain-reads-a", rukpakv1alpha2.ClassPlain, "a"),
	}
	r.client = fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithIndex(&rukpakv1alpha2.BundleDeployment{}, configMapIndex, r.configMapsRead).Build()
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	ctx := context.Background()
	if got := names(r.bundlesReading(ctx, cm("rukpak-system", "a"))); !slices.Equal(got, []string{"alias-reads-a", "reads-a"}) {
		t.Errorf("ConfigMap a wakes %v", got)
	}
	if got := names(r.bundlesReading(ctx, cm("rukpak-system", "b"))); !slices.Equal(got, []string{"reads-a", "reads-b"}) {
		t.Errorf("ConfigMap b wakes %v", got)
	}
	// kapp writes its app records as ConfigMaps alongside the Apps: none is a
	// bundle's.
	if got := r.bundlesReading(ctx, cm("apps", "a")); len(got) != 0 {
		t.Errorf("a ConfigMap outside the system namespace wakes %v", names(got))
	}
	if got := r.bundlesReading(ctx, cm("rukpak-system", "unread")); len(got) != 0 {
		t.Errorf("a ConfigMap no bundle reads wakes %v", names(got))
	}
}

func TestReferencing(t *testing.T) {
	t.Parallel()
	classes, err := ParseClasses([]string{rukpakv1alpha2.ClassPlain})
	if err != nil {
		t.Fatal(err)
	}
	r := &BundleDeploymentReconciler{set: Settings{Config: translate.Config{SystemNamespace: "rukpak-system", AppNamespaces: []string{"apps-0"}}, Classes: classes}}
	pulled := newBD("pulled", rukpakv1alpha2.ClassPlain)
	pulled.Spec.Source.Image.ImagePullSecretName = "pull"
	r.client = fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(pulled, newBD("public", rukpakv1alpha2.ClassPlain)).
		WithIndex(&rukpakv1alpha2.BundleDeployment{}, referencesIndex, r.referencesHeld).Build()
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "rukpak-system", Name: "pull"}}
	if got := names(r.referencing(true)(ctx, secret)); !slices.Equal(got, []string{"pulled"}) {
		t.Errorf("the pull Secret wakes %v, want [pulled]", got)
	}
	// A ConfigMap of the same name is another object.
	if got := r.referencing(false)(ctx, &corev1.ConfigMap{ObjectMeta: secret.ObjectMeta}); len(got) != 0 {
		t.Errorf("a ConfigMap named like the pull Secret wakes %v", names(got))
	}
}
