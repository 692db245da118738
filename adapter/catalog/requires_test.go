package catalog

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResolve(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	offer := func(pkg, channel, version string, dflt bool, provides ...schema.GroupVersionKind) Offer {
		return Offer{Entry: Entry{Package: pkg, Channel: channel, Bundle: pkg + ".v" + version, Version: version, RefName: channel + "." + pkg}, Default: dflt, Provides: provides}
	}
	offers := []Offer{
		offer("etcd", "stable", "0.9.0", true), offer("etcd", "stable", "0.9.4", true), offer("etcd", "stable", "1.0.0", true),
		offer("etcd", "alpha", "2.0.0", false),
		offer("widgets", "stable", "1.0.0", true, widget), offer("widgets", "stable", "1.1.0", true, widget),
		offer("gadgets", "stable", "3.0.0", true, widget),
	}
	tests := []struct {
		name    string
		needs   []Need
		present []Present
		// install and wait name the packages (and versions) chosen;
		// refused the words of the refusals.
		install, wait []string
		refused       []string
	}{
		{name: "the highest version in range of the default channel",
			needs: []Need{{Package: "etcd", Range: ">=0.9.0 <1.0.0"}}, install: []string{"etcd 0.9.4"}},
		{name: "a PackageInstall of the package in range is waited for",
			needs: []Need{{Package: "etcd", Range: ">=0.9.0"}}, present: []Present{{Name: "my-etcd", Package: "etcd", Version: "0.9.0"}}, wait: []string{"my-etcd"}},
		{name: "a PackageInstall outside the range conflicts",
			needs: []Need{{Package: "etcd", Range: ">=1.0.0", What: "olm.package etcd"}}, present: []Present{{Name: "my-etcd", Package: "etcd", Version: "0.9.0"}},
			refused: []string{"olm.package etcd: PackageInstall my-etcd installs etcd 0.9.0, outside that range"}},
		{name: "no version in range",
			needs: []Need{{Package: "etcd", Range: ">=3.0.0", What: "etcd"}}, refused: []string{"etcd: no version of etcd in its default channel is in that range (published: 0.9.0, 0.9.4, 1.0.0)"}},
		{name: "no such package", needs: []Need{{Package: "nope", Range: ">=0.0.0", What: "nope"}}, refused: []string{"the catalog holds no package nope"}},
		{name: "an API: the first package by name that provides it, at its highest version",
			needs: []Need{{GVK: widget}}, install: []string{"gadgets 3.0.0"}},
		{name: "an API a present PackageInstall provides", needs: []Need{{GVK: widget}}, present: []Present{{Name: "w", Package: "widgets"}}, wait: []string{"w"}},
		{name: "an API nobody provides", needs: []Need{{GVK: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Missing"}, What: "olm.gvk Missing"}},
			refused: []string{"olm.gvk Missing: no package of the catalog provides example.com/v1 Missing"}},
		{name: "two needs of one package install it once",
			needs: []Need{{Package: "etcd", Range: ">=0.9.0"}, {Package: "etcd", Range: "<2.0.0"}}, install: []string{"etcd 1.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Resolve(tt.needs, offers, tt.present)
			var install, wait []string
			for _, o := range r.Install {
				install = append(install, o.Entry.Package+" "+o.Entry.Version)
			}
			for _, p := range r.Wait {
				wait = append(wait, p.Name)
			}
			if strings.Join(install, ",") != strings.Join(tt.install, ",") || strings.Join(wait, ",") != strings.Join(tt.wait, ",") {
				t.Fatalf("install %v wait %v, want %v and %v", install, wait, tt.install, tt.wait)
			}
			if len(r.Refused) != len(tt.refused) {
				t.Fatalf("refused %q, want %q", r.Refused, tt.refused)
			}
			for i, w := range tt.refused {
				if !strings.Contains(r.Refused[i], w) {
					t.Errorf("%q lacks %q", r.Refused[i], w)
				}
			}
		})
	}
}

func TestOfferOf(t *testing.T) {
	gvks := []schema.GroupVersionKind{{Group: "b.io", Version: "v1", Kind: "B"}, {Group: "a.io", Version: "v1", Kind: "A"}}
	o, ok := OfferOf(map[string]string{LabelPackage: "p"}, map[string]string{AnnotationBundle: "p.v1", AnnotationVersion: "1.0.0",
		AnnotationDefaultChannel: "true", AnnotationProvides: ProvidesValue(gvks)})
	if !ok || !o.Default || len(o.Provides) != 2 || o.Provides[0].Kind != "A" {
		t.Fatalf("%+v", o)
	}
}
