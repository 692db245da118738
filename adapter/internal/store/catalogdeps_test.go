package store

import (
	"context"
	"strings"
	"testing"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// TestCatalogDeps_Meet: what the adapter writes and says for a catalog
// bundle's unmet package dependencies (the decisions are Resolve's, tested
// in adapter/catalog; the real API in test/packaging).
func TestCatalogDeps_Meet(t *testing.T) {
	const ns = "ops"
	const global = "kapp-controller-packaging-global"
	pkgIn := func(ns, name, version string) client.Object {
		e := catalog.Entry{Package: name, Channel: "stable", Bundle: name + ".v" + version, Version: version, RefName: "stable." + name}
		a := e.Annotations()
		a[catalog.AnnotationDefaultChannel] = "true"
		return &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e.RefName + "." + version, Labels: map[string]string{catalog.LabelPackage: name}, Annotations: a},
			Spec: datav1alpha1.PackageSpec{RefName: e.RefName, Version: version}}
	}
	pkg := func(name, version string) client.Object { return pkgIn(ns, name, version) }
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	excluding := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{packagingapi.AnnotationExcludeGlobal: ""}}}
	pi := func(name, refName, requiredBy string) client.Object {
		p := &packagingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: packagingv1alpha1.PackageInstallSpec{PackageRef: &packagingv1alpha1.PackageRef{RefName: refName}}}
		if requiredBy != "" {
			p.Labels = map[string]string{catalog.LabelRequiredBy: requiredBy}
		}
		return p
	}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: catalog.DependenciesServiceAccount}}
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "a." + ns, Labels: map[string]string{catalog.LabelPackage: "a"},
		Annotations: map[string]string{catalog.AnnotationBundle: "a.v1", catalog.AnnotationPackagesNS: ns, catalog.AnnotationInstall: "a"}}}
	needs := func(pkgs ...string) []convert.Unmet {
		var out []convert.Unmet
		for _, p := range pkgs {
			out = append(out, convert.Unmet{Dependency: convert.Dependency{Type: convert.DependencyPackage, Package: p, VersionRange: ">=1.0.0"}, Message: p + " is not installed"})
		}
		return out
	}
	tests := []struct {
		name    string
		objs    []client.Object
		unmet   []convert.Unmet
		kind    status.FailureKind // 0: nothing to wait for
		words   string
		created string // the PackageInstall made, "" none
		// waitsOn: what the waiting set says of the other PackageInstalls.
		waitsOn func(other, self string) bool
		// watched: only a change of the catalog's Packages can end the wait.
		watched bool
	}{
		{name: "a missing package is installed with the namespace's account", objs: []client.Object{pkg("b", "1.2.0"), pi("a", "stable.a", ""), account},
			unmet: needs("b"), kind: status.DependenciesInstalling, words: "installing b 1.2.0 from the catalog as PackageInstall ops/b", created: "b"},
		{name: "without the namespace's account nothing is written", objs: []client.Object{pkg("b", "1.2.0"), pi("a", "stable.a", "")},
			unmet: needs("b"), kind: status.DependenciesUnmet, words: "the ServiceAccount rukpak-kapp-dependencies of namespace ops, which does not exist"},
		{name: "a PackageInstall of the package is waited for", objs: []client.Object{pkg("b", "1.2.0"), pi("a", "stable.a", ""), pi("mine", "stable.b", ""), account},
			unmet: needs("b"), kind: status.DependenciesInstalling, words: "waiting for PackageInstall ops/mine to install b"},
		{name: "a cycle: what required this bundle is not waited for", objs: []client.Object{pkg("b", "1.2.0"), pi("a", "stable.a", "b"), pi("b", "stable.b", ""), account},
			unmet: needs("b")},
		{name: "two PackageInstalls made by users that need each other: the other waits already, so this one goes first", objs: []client.Object{pkg("b", "1.2.0"), pi("a", "stable.a", ""), pi("b", "stable.b", ""), account},
			waitsOn: func(other, self string) bool { return other == "ops/b" && self == "ops/a" }, unmet: needs("b")},
		{name: "a PackageInstall named after the package that installs another is not written over", objs: []client.Object{pkg("b", "1.2.0"), pi("a", "stable.a", ""), pi("b", "stable.other", ""), account},
			unmet: needs("b"), kind: status.DependenciesUnmet, words: "as PackageInstall ops/b, but a PackageInstall of that name installs something else, so nothing was installed for it"},
		{name: "what the catalog lacks is refused", objs: []client.Object{pi("a", "stable.a", ""), account},
			unmet: needs("z"), kind: status.DependenciesUnmet, words: "cannot be met from its catalog (the Packages seen from namespace ops, kapp-controller's global packaging namespace " + global + " included), so nothing was installed for it: olm.package z >=1.0.0: the catalog holds no package z",
			watched: true},
		{name: "a package of the global packaging namespace is installed", objs: []client.Object{namespace, pkgIn(global, "b", "1.2.0"), pi("a", "stable.a", ""), account},
			unmet: needs("b"), kind: status.DependenciesInstalling, words: "installing b 1.2.0 from the catalog as PackageInstall ops/b", created: "b"},
		{name: "the namespace's Package shadows the global one of the same name", objs: []client.Object{namespace, pkgIn(global, "b", "1.2.0"), pkgIn(global, "b", "1.3.0"),
			&datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stable.b.1.3.0", Labels: map[string]string{catalog.LabelPackage: "b"}, Annotations: map[string]string{catalog.AnnotationBundle: "b.v1.3.0"}}},
			pi("a", "stable.a", ""), account},
			unmet: needs("b"), kind: status.DependenciesInstalling, words: "installing b 1.2.0 from the catalog", created: "b"},
		{name: "a namespace that excludes the global packages does not see them", objs: []client.Object{excluding, pkgIn(global, "b", "1.2.0"), pi("a", "stable.a", ""), account},
			unmet: needs("b"), kind: status.DependenciesUnmet, words: "the catalog holds no package b", watched: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := fakekube.New(nil, tt.objs...)
			m, err := catalogDeps{direct: k.Direct, packages: packagingapi.NewPackages(k.Direct, k.Direct, global), writer: k.Client, waitsOn: tt.waitsOn}.meet(context.Background(), bd, tt.unmet)
			if err != nil {
				t.Fatal(err)
			}
			f := m.wait
			if m.watched != tt.watched {
				t.Errorf("watched %v, want %v", m.watched, tt.watched)
			}
			switch {
			case tt.kind == 0 && f != nil:
				t.Fatalf("waits: %+v", f)
			case tt.kind != 0 && (f == nil || f.Kind != tt.kind || !strings.Contains(f.Message, tt.words)):
				t.Fatalf("failure %+v, want kind %d with %q", f, tt.kind, tt.words)
			}
			list := &packagingv1alpha1.PackageInstallList{}
			if err := k.Client.List(context.Background(), list, client.HasLabels{catalog.LabelRequiredBy}); err != nil {
				t.Fatal(err)
			}
			var made []string
			for _, p := range list.Items {
				if p.Labels[catalog.LabelRequiredBy] == "a" {
					made = append(made, p.Name)
					if p.Spec.ServiceAccountName != catalog.DependenciesServiceAccount {
						t.Errorf("PackageInstall %s installs with %q", p.Name, p.Spec.ServiceAccountName)
					}
				}
			}
			if strings.Join(made, ",") != tt.created {
				t.Fatalf("made %v, want %q", made, tt.created)
			}
		})
	}
}
