package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// csv is a ClusterServiceVersion with the install modes named.
func csv(name string, modes ...operatorsv1alpha1.InstallModeType) operatorsv1alpha1.ClusterServiceVersion {
	c := operatorsv1alpha1.ClusterServiceVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: operatorsv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"description": "short " + name, "categories": "Monitoring, Database", "operatorframework.io/suggested-namespace": "suggested"}},
	}
	c.Spec.DisplayName = "Display " + name
	c.Spec.Description = "long " + name
	c.Spec.Provider.Name = "ACME"
	c.Spec.Maintainers = []operatorsv1alpha1.Maintainer{{Name: "Ann"}}
	for _, m := range []operatorsv1alpha1.InstallModeType{"OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"} {
		supported := false
		for _, want := range modes {
			supported = supported || want == m
		}
		c.Spec.InstallModes = append(c.Spec.InstallModes, operatorsv1alpha1.InstallMode{Type: m, Supported: supported})
	}
	return c
}

// bundle is an olm.bundle carrying its whole CSV (olm.bundle.object).
func bundle(pkg, name, version string) declcfg.Bundle {
	data, _ := json.Marshal(csv(name, "OwnNamespace", "AllNamespaces"))
	return declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: pkg, Name: name, Image: "registry.example/" + name,
		Properties: []property.Property{property.MustBuildPackage(pkg, version), property.MustBuildBundleObject(data)}}
}

// metaBundle is an olm.bundle carrying its CSV's metadata (olm.csv.metadata).
func metaBundle(pkg, name, version string, modes ...operatorsv1alpha1.InstallModeType) declcfg.Bundle {
	return declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: pkg, Name: name, Image: "registry.example/" + name,
		Properties: []property.Property{property.MustBuildPackage(pkg, version), property.MustBuildCSVMetadata(csv(name, modes...))}}
}

func pkg(name, defaultChannel string) declcfg.Package {
	return declcfg.Package{Schema: declcfg.SchemaPackage, Name: name, DefaultChannel: defaultChannel}
}

func channel(pkg, name string, entries ...declcfg.ChannelEntry) declcfg.Channel {
	return declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: name, Entries: entries}
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name string
		cfg  declcfg.DeclarativeConfig
		// packages: Package name → its catalog annotations that matter.
		packages map[string]map[string]string
		metadata map[string]string // refName → display name
		refused  []string
	}{
		{
			name: "a replaces chain in two channels",
			cfg: declcfg.DeclarativeConfig{
				Packages: []declcfg.Package{pkg("prometheus", "beta")},
				Channels: []declcfg.Channel{
					channel("prometheus", "alpha", declcfg.ChannelEntry{Name: "p.1.0.0"}),
					channel("prometheus", "beta", declcfg.ChannelEntry{Name: "p.1.0.0"}, declcfg.ChannelEntry{Name: "p.1.0.1", Replaces: "p.1.0.0"}),
				},
				Bundles: []declcfg.Bundle{bundle("prometheus", "p.1.0.0", "1.0.0"), bundle("prometheus", "p.1.0.1", "1.0.1")},
			},
			packages: map[string]map[string]string{
				"alpha.prometheus.operators.rukpak-kapp.dev.1.0.0": {AnnotationBundle: "p.1.0.0", AnnotationChannel: "alpha"},
				"beta.prometheus.operators.rukpak-kapp.dev.1.0.0":  {AnnotationBundle: "p.1.0.0", AnnotationChannel: "beta"},
				"beta.prometheus.operators.rukpak-kapp.dev.1.0.1":  {AnnotationBundle: "p.1.0.1", AnnotationReplaces: "p.1.0.0"},
			},
			metadata: map[string]string{
				"alpha.prometheus.operators.rukpak-kapp.dev": "Display p.1.0.0, channel alpha",
				"beta.prometheus.operators.rukpak-kapp.dev":  "Display p.1.0.1, channel beta (default)",
			},
		},
		{
			name: "skips, skipRange and a prerelease",
			cfg: declcfg.DeclarativeConfig{
				Packages: []declcfg.Package{pkg("db", "stable")},
				Channels: []declcfg.Channel{channel("db", "stable",
					declcfg.ChannelEntry{Name: "db.2.0.0-rc.1", Skips: []string{"db.1.0.0", "db.1.1.0"}},
					declcfg.ChannelEntry{Name: "db.2.0.0", SkipRange: ">=1.0.0 <2.0.0"})},
				Bundles: []declcfg.Bundle{bundle("db", "db.2.0.0-rc.1", "2.0.0-rc.1"), bundle("db", "db.2.0.0", "2.0.0")},
			},
			packages: map[string]map[string]string{
				"stable.db.operators.rukpak-kapp.dev.2.0.0-rc.1": {AnnotationSkips: "db.1.0.0,db.1.1.0"},
				"stable.db.operators.rukpak-kapp.dev.2.0.0":      {AnnotationSkipRange: ">=1.0.0 <2.0.0"},
			},
			metadata: map[string]string{"stable.db.operators.rukpak-kapp.dev": "Display db.2.0.0, channel stable (default)"},
		},
		{
			name: "build metadata: dropped from the Package version, kept for the edges; twins refused",
			cfg: declcfg.DeclarativeConfig{
				Packages: []declcfg.Package{pkg("b", "s")},
				Channels: []declcfg.Channel{channel("b", "s",
					declcfg.ChannelEntry{Name: "b.1"}, declcfg.ChannelEntry{Name: "b.2a", Replaces: "b.1"}, declcfg.ChannelEntry{Name: "b.2b", Replaces: "b.1"})},
				Bundles: []declcfg.Bundle{bundle("b", "b.1", "1.0.0+build.7"), bundle("b", "b.2a", "2.0.0+a"), bundle("b", "b.2b", "2.0.0+b")},
			},
			packages: map[string]map[string]string{"s.b.operators.rukpak-kapp.dev.1.0.0": {AnnotationVersion: "1.0.0+build.7"}},
			metadata: map[string]string{"s.b.operators.rukpak-kapp.dev": "Display b.1, channel s (default)"},
			refused: []string{
				"package b, channel s, bundle b.2a: bundles b.2a, b.2b differ only in build metadata, which makes them the same Package version 2.0.0",
				"package b, channel s, bundle b.2b: bundles b.2a, b.2b differ only in build metadata, which makes them the same Package version 2.0.0",
			},
		},
		{
			name: "deprecations: the package, a channel, a bundle",
			cfg: declcfg.DeclarativeConfig{
				Packages: []declcfg.Package{pkg("old", "a")},
				Channels: []declcfg.Channel{channel("old", "a", declcfg.ChannelEntry{Name: "old.1"}), channel("old", "b", declcfg.ChannelEntry{Name: "old.1"})},
				Bundles:  []declcfg.Bundle{bundle("old", "old.1", "1.0.0")},
				Deprecations: []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecation, Package: "old", Entries: []declcfg.DeprecationEntry{
					{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaChannel, Name: "b"}, Message: "use a"},
					{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "old.1"}, Message: "CVE-1"},
				}}},
			},
			packages: map[string]map[string]string{
				"a.old.operators.rukpak-kapp.dev.1.0.0": {AnnotationDeprecated: "CVE-1"},
				"b.old.operators.rukpak-kapp.dev.1.0.0": {AnnotationDeprecated: "CVE-1"},
			},
			metadata: map[string]string{
				"a.old.operators.rukpak-kapp.dev": "Display old.1, channel a (default)",
				"b.old.operators.rukpak-kapp.dev": "Display old.1, channel b (deprecated)",
			},
		},
		{
			name: "names: a channel with dots, one that maps to a taken refName, one that maps to nothing",
			cfg: declcfg.DeclarativeConfig{
				Packages: []declcfg.Package{pkg("n", "stable-4.14")},
				Channels: []declcfg.Channel{
					channel("n", "stable-4.14", declcfg.ChannelEntry{Name: "n.1"}),
					channel("n", "Stable-4-14", declcfg.ChannelEntry{Name: "n.1"}),
					channel("n", "__", declcfg.ChannelEntry{Name: "n.1"}),
				},
				Bundles: []declcfg.Bundle{bundle("n", "n.1", "1.0.0")},
			},
			packages: map[string]map[string]string{"stable-4-14.n.operators.rukpak-kapp.dev.1.0.0": {AnnotationChannel: "stable-4.14"}},
			metadata: map[string]string{"stable-4-14.n.operators.rukpak-kapp.dev": "Display n.1, channel stable-4.14 (default)"},
			refused: []string{
				"package n, channel Stable-4-14: its refName stable-4-14.n.operators.rukpak-kapp.dev is already the one of n/stable-4.14",
				`package n, channel __: channel "__" makes no DNS label`,
			},
		},
		{
			name: "bundles that cannot be published: missing, no semver, no image, an unknown media type; one without a CSV can",
			cfg: declcfg.DeclarativeConfig{
				Packages: []declcfg.Package{pkg("x", "s")},
				Channels: []declcfg.Channel{channel("x", "s",
					declcfg.ChannelEntry{Name: "x.gone"}, declcfg.ChannelEntry{Name: "x.v"}, declcfg.ChannelEntry{Name: "x.nocsv"},
					declcfg.ChannelEntry{Name: "x.noimage"}, declcfg.ChannelEntry{Name: "x.helm"}, declcfg.ChannelEntry{Name: "x.ok"})},
				Bundles: []declcfg.Bundle{
					bundle("x", "x.v", "v1"),
					{Schema: declcfg.SchemaBundle, Package: "x", Name: "x.nocsv", Image: "i", Properties: []property.Property{property.MustBuildPackage("x", "1.0.0")}},
					func() declcfg.Bundle { b := bundle("x", "x.noimage", "1.0.1"); b.Image = ""; return b }(),
					{Schema: declcfg.SchemaBundle, Package: "x", Name: "x.helm", Image: "i", Properties: []property.Property{property.MustBuildPackage("x", "1.0.3"),
						{Type: "olm.bundle.mediatype", Value: []byte(`"helm"`)}}},
					metaBundle("x", "x.ok", "1.0.2", "SingleNamespace"),
				},
			},
			packages: map[string]map[string]string{
				"s.x.operators.rukpak-kapp.dev.1.0.0": {AnnotationBundle: "x.nocsv"},
				"s.x.operators.rukpak-kapp.dev.1.0.2": {AnnotationBundle: "x.ok"},
			},
			metadata: map[string]string{"s.x.operators.rukpak-kapp.dev": "Display x.ok, channel s (default)"},
			refused: []string{
				"package x, channel s, bundle x.gone: the channel names a bundle the catalog does not hold",
				`package x, channel s, bundle x.v: version "v1" is not a semver`,
				"package x, channel s, bundle x.noimage: the bundle names no image",
				`package x, channel s, bundle x.helm: its media type "helm" is neither registry+v1 nor plain+v0`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Publish(&tt.cfg, Options{})
			if len(got.Packages) != len(tt.packages) {
				t.Errorf("Packages: %v, want %d", names(got.Packages), len(tt.packages))
			}
			for _, p := range got.Packages {
				want, ok := tt.packages[p.Name]
				if !ok {
					t.Errorf("unexpected Package %s", p.Name)
					continue
				}
				if p.Name != p.Spec.RefName+"."+p.Spec.Version {
					t.Errorf("%s: name is not refName.version (%s, %s)", p.Name, p.Spec.RefName, p.Spec.Version)
				}
				for k, v := range want {
					if p.Annotations[k] != v {
						t.Errorf("%s: annotation %s = %q, want %q", p.Name, k, p.Annotations[k], v)
					}
				}
			}
			if len(got.Metadata) != len(tt.metadata) {
				t.Errorf("PackageMetadatas: %d, want %d", len(got.Metadata), len(tt.metadata))
			}
			for _, m := range got.Metadata {
				if want, ok := tt.metadata[m.Name]; !ok || m.Spec.DisplayName != want {
					t.Errorf("PackageMetadata %s: display name %q, want %q", m.Name, m.Spec.DisplayName, want)
				}
			}
			if len(got.Refused) != len(tt.refused) {
				t.Errorf("refused %v, want %d", got.Refused, len(tt.refused))
			}
			for i := range min(len(got.Refused), len(tt.refused)) {
				if !strings.HasPrefix(got.Refused[i].String(), tt.refused[i]) {
					t.Errorf("refusal %d: %q, want it to start with %q", i, got.Refused[i], tt.refused[i])
				}
			}
		})
	}
}

func names(ps []*datav1alpha1.Package) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// The metadata and values schema come from the channel head's CSV in either
// form, and the deprecations show where kctrl shows them.
func TestPublish_WhatKctrlShows(t *testing.T) {
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{pkg("p", "s")},
		Channels: []declcfg.Channel{channel("p", "s", declcfg.ChannelEntry{Name: "p.1"}, declcfg.ChannelEntry{Name: "p.2", Replaces: "p.1"})},
		Bundles:  []declcfg.Bundle{bundle("p", "p.1", "1.0.0"), metaBundle("p", "p.2", "2.0.0", "OwnNamespace", "SingleNamespace")},
		Deprecations: []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecation, Package: "p", Entries: []declcfg.DeprecationEntry{
			{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaPackage}, Message: "p is gone"},
			{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "p.1"}, Message: "upgrade"},
		}}},
	}
	got := Publish(&cfg, Options{Domain: "ops.example.com", Namespace: "pkgs"})
	if len(got.Metadata) != 1 || len(got.Packages) != 2 {
		t.Fatalf("got %d metadata, %d packages", len(got.Metadata), len(got.Packages))
	}
	m := got.Metadata[0]
	if m.Name != "s.p.ops.example.com" || m.Namespace != "pkgs" || m.Spec.ProviderName != "ACME" ||
		!strings.HasPrefix(m.Spec.ShortDescription, "Deprecated package: p is gone short p.2") ||
		strings.Join(m.Spec.Categories, "|") != "Monitoring|Database" || len(m.Spec.Maintainers) != 1 {
		t.Errorf("metadata: %+v", m.Spec)
	}
	p1, p2 := got.Packages[0], got.Packages[1]
	if p1.Spec.ReleaseNotes != "Deprecated: upgrade" || p2.Spec.ReleaseNotes != "" {
		t.Errorf("release notes %q, %q", p1.Spec.ReleaseNotes, p2.Spec.ReleaseNotes)
	}
	var schema struct {
		Properties map[string]map[string]any
	}
	if err := json.Unmarshal(p2.Spec.ValuesSchema.OpenAPIv3.Raw, &schema); err != nil {
		t.Fatal(err)
	}
	watch := schema.Properties["watchNamespaces"]
	if watch["maxItems"] != float64(1) || !strings.Contains(watch["description"].(string), "The bundle supports: SingleNamespace, OwnNamespace.") {
		t.Errorf("watchNamespaces: %v", watch)
	}
	if schema.Properties["installNamespace"]["default"] != "suggested" {
		t.Errorf("installNamespace: %v", schema.Properties["installNamespace"])
	}
	files := p2.Spec.Template.Spec.Fetch[0].Inline.Paths
	for _, want := range []string{"kind: OperatorInstall", `image: "registry.example/p.2"`, `bundle: "p.2"`, `format: "registry+v1"`, `catalog.rukpak-kapp.dev/package: "p"`} {
		if !strings.Contains(files[operatorInstallFile], want) {
			t.Errorf("the OperatorInstall template lacks %q:\n%s", want, files[operatorInstallFile])
		}
	}
	if !strings.Contains(files[schemaFile], `installNamespace: "suggested"`) {
		t.Errorf("values schema file:\n%s", files[schemaFile])
	}
}

// A plain+v0 bundle is installed as a plain bundle, without
// watchNamespaces; a bundle without its CSV in the catalog leaves the
// install modes to the conversion.
func TestPublish_Classes(t *testing.T) {
	plain := declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: "p", Name: "p.1", Image: "i",
		Properties: []property.Property{property.MustBuildPackage("p", "0.1.0"), {Type: "olm.bundle.mediatype", Value: []byte(`"plain+v0"`)}}}
	bare := declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: "r", Name: "r.1", Image: "i", Properties: []property.Property{property.MustBuildPackage("r", "1.0.0")}}
	cfg := declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{pkg("p", "s"), pkg("r", "s")},
		Channels: []declcfg.Channel{channel("p", "s", declcfg.ChannelEntry{Name: "p.1"}), channel("r", "s", declcfg.ChannelEntry{Name: "r.1"})},
		Bundles:  []declcfg.Bundle{plain, bare},
	}
	got := Publish(&cfg, Options{})
	if len(got.Packages) != 2 {
		t.Fatalf("packages %v, refused %v", names(got.Packages), got.Refused)
	}
	for _, p := range got.Packages {
		bd := p.Spec.Template.Spec.Fetch[0].Inline.Paths[operatorInstallFile]
		var schema struct{ Properties map[string]map[string]any }
		if err := json.Unmarshal(p.Spec.ValuesSchema.OpenAPIv3.Raw, &schema); err != nil {
			t.Fatal(err)
		}
		watch, hasWatch := schema.Properties["watchNamespaces"]
		switch p.Labels[LabelPackage] {
		case "p":
			if !strings.Contains(bd, `format: "plain+v0"`) || strings.Contains(bd, "watchNamespaces") || hasWatch {
				t.Errorf("plain bundle:\n%s\nschema %v", bd, schema.Properties)
			}
		case "r":
			if !strings.Contains(bd, `format: "registry+v1"`) || !strings.Contains(bd, "watchNamespaces") || watch["maxItems"] != nil ||
				strings.Contains(watch["description"].(string), "The bundle supports") {
				t.Errorf("registry bundle without a CSV:\n%s\nwatchNamespaces %v", bd, watch)
			}
			if schema.Properties["installNamespace"]["default"] != "r" {
				t.Errorf("installNamespace defaults to the package name: %v", schema.Properties["installNamespace"])
			}
		}
	}
}
