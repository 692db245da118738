package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"sigs.k8s.io/yaml"
)

// corpus is the registry+v1 corpus of the repository's test data: 61 real
// bundles from community-operators-prod, one version of one operator each.
const corpus = "../../../test/testdata/registry-v1-corpus"

type corpusBundle struct {
	pkg, defaultChannel string
	channels            []string
	csv                 operatorsv1alpha1.ClusterServiceVersion
	raw                 []byte
}

func readCorpus(t *testing.T) []corpusBundle {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(corpus, "*", "*", "metadata", "annotations.yaml"))
	if err != nil || len(dirs) < 60 {
		t.Fatalf("the corpus has %d bundles (%v)", len(dirs), err)
	}
	var out []corpusBundle
	for _, ann := range dirs {
		root := filepath.Dir(filepath.Dir(ann))
		var meta struct{ Annotations map[string]string }
		data, err := os.ReadFile(ann)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &meta); err != nil {
			t.Fatalf("%s: %v", ann, err)
		}
		b := corpusBundle{
			pkg:            meta.Annotations["operators.operatorframework.io.bundle.package.v1"],
			defaultChannel: meta.Annotations["operators.operatorframework.io.bundle.channel.default.v1"],
			channels:       strings.Split(meta.Annotations["operators.operatorframework.io.bundle.channels.v1"], ","),
		}
		csvs, _ := filepath.Glob(filepath.Join(root, "manifests", "*clusterserviceversion*"))
		if len(csvs) != 1 {
			t.Fatalf("%s: %d CSVs", root, len(csvs))
		}
		data, err = os.ReadFile(csvs[0])
		if err != nil {
			t.Fatal(err)
		}
		if b.raw, err = yaml.YAMLToJSON(data); err != nil {
			t.Fatalf("%s: %v", csvs[0], err)
		}
		if err := json.Unmarshal(b.raw, &b.csv); err != nil {
			t.Fatalf("%s: %v", csvs[0], err)
		}
		if b.defaultChannel == "" {
			b.defaultChannel = b.channels[0]
		}
		out = append(out, b)
	}
	return out
}

// corpusCatalog is the catalog a catalog author would write for the corpus:
// every bundle in each channel its metadata names, with the edges its CSV
// declares (spec.replaces, spec.skips, the olm.skipRange annotation); every
// other bundle carries its whole CSV (olm.bundle.object), the rest its
// metadata (olm.csv.metadata); the first bundle is deprecated.
func corpusCatalog(bundles []corpusBundle) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	seen := map[string]bool{}
	for i, b := range bundles {
		if !seen[b.pkg] {
			seen[b.pkg] = true
			cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: b.pkg, DefaultChannel: b.defaultChannel})
		}
		e := declcfg.ChannelEntry{Name: b.csv.Name, Replaces: b.csv.Spec.Replaces, Skips: b.csv.Spec.Skips, SkipRange: b.csv.Annotations["olm.skipRange"]}
		for _, ch := range b.channels {
			ch = strings.TrimSpace(ch)
			if i := slices.IndexFunc(cfg.Channels, func(c declcfg.Channel) bool { return c.Package == b.pkg && c.Name == ch }); i >= 0 {
				cfg.Channels[i].Entries = append(cfg.Channels[i].Entries, e)
				continue
			}
			cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: b.pkg, Name: ch, Entries: []declcfg.ChannelEntry{e}})
		}
		form := property.MustBuildBundleObject(b.raw)
		if i%2 == 1 {
			form = property.MustBuildCSVMetadata(b.csv)
		}
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: b.pkg, Name: b.csv.Name, Image: "quay.io/corpus/" + b.pkg + ":" + b.csv.Spec.Version.String(),
			Properties: []property.Property{property.MustBuildPackage(b.pkg, b.csv.Spec.Version.String()), form}})
	}
	cfg.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecation, Package: bundles[0].pkg, Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: bundles[0].csv.Name}, Message: "use a newer version"}}}}
	return cfg
}

// TestPublish_Corpus publishes the corpus's catalog: every bundle of every
// channel becomes a Package (a prerelease included), with its CSV's edges
// and install modes, and its PackageMetadata shows the CSV's metadata.
func TestPublish_Corpus(t *testing.T) {
	bundles := readCorpus(t)
	got := Publish(corpusCatalog(bundles), Options{})
	if len(got.Refused) > 0 {
		t.Errorf("refused: %v", got.Refused)
	}
	packages := map[string]int{}
	for _, p := range got.Packages {
		packages[p.Labels[LabelPackage]+"/"+p.Annotations[AnnotationChannel]]++
	}
	var shapes struct{ replaces, skips, skipRange, prerelease, channels int }
	for _, b := range bundles {
		if b.csv.Spec.Replaces != "" {
			shapes.replaces++
		}
		if len(b.csv.Spec.Skips) > 0 {
			shapes.skips++
		}
		if b.csv.Annotations["olm.skipRange"] != "" {
			shapes.skipRange++
		}
		if len(b.csv.Spec.Version.Pre) > 0 {
			shapes.prerelease++
		}
		if len(b.channels) > 1 {
			shapes.channels++
		}
		for _, ch := range b.channels {
			ch = strings.TrimSpace(ch)
			if packages[b.pkg+"/"+ch] != 1 {
				t.Errorf("%s channel %s: %d Packages", b.pkg, ch, packages[b.pkg+"/"+ch])
				continue
			}
			ref, err := RefName(b.pkg, ch, DefaultDomain)
			if err != nil {
				t.Fatal(err)
			}
			version := b.csv.Spec.Version.Version
			version.Build = nil
			i := slices.IndexFunc(got.Packages, func(p *datav1alpha1.Package) bool { return p.Name == ref+"."+version.String() })
			if i < 0 {
				t.Errorf("%s: no Package %s.%s", b.pkg, ref, version)
				continue
			}
			p := got.Packages[i]
			e, _ := EntryOf(p.Labels, p.Annotations)
			if e.Replaces != b.csv.Spec.Replaces || !slices.Equal(e.Skips, b.csv.Spec.Skips) || e.SkipRange != b.csv.Annotations["olm.skipRange"] {
				t.Errorf("%s: edges %+v, the CSV says replaces %q skips %v skipRange %q", p.Name, e, b.csv.Spec.Replaces, b.csv.Spec.Skips, b.csv.Annotations["olm.skipRange"])
			}
		}
	}
	t.Logf("corpus shapes: %+v", shapes)
	if shapes.replaces == 0 || shapes.skips == 0 || shapes.skipRange == 0 || shapes.prerelease == 0 {
		t.Errorf("the corpus no longer holds every edge shape: %+v", shapes)
	}
	first := got.Packages[slices.IndexFunc(got.Packages, func(p *datav1alpha1.Package) bool { return p.Annotations[AnnotationBundle] == bundles[0].csv.Name })]
	if first.Spec.ReleaseNotes != "Deprecated: use a newer version" {
		t.Errorf("the deprecated bundle's release notes: %q", first.Spec.ReleaseNotes)
	}
	for _, m := range got.Metadata {
		if m.Spec.DisplayName == "" || !strings.Contains(m.Spec.DisplayName, ", channel ") {
			t.Errorf("%s: display name %q", m.Name, m.Spec.DisplayName)
		}
	}
}

// A skipRange reaches what it holds, as OLM reads it, for every skipRange
// of the corpus: the version just below the bundle's own is held by the
// ranges written as "<version".
func TestCorpusSkipRanges(t *testing.T) {
	for _, b := range readCorpus(t) {
		r := b.csv.Annotations["olm.skipRange"]
		if r == "" {
			continue
		}
		if _, err := semver.ParseRange(r); err != nil {
			t.Errorf("%s: skipRange %q does not parse: %v", b.csv.Name, r, err)
			continue
		}
		e := Entry{Package: b.pkg, Bundle: b.csv.Name, SkipRange: r}
		if !e.ReachedFrom(Entry{Package: b.pkg, Bundle: "older", Version: "0.0.1"}) && strings.HasPrefix(r, "<") {
			t.Errorf("%s: skipRange %q does not reach 0.0.1", b.csv.Name, r)
		}
	}
}
