package catalog

import (
	"github.com/rukpak-kapp/rukpak-kapp/test/catalogtest"
	"slices"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/blang/semver/v4"
)

// corpus is the registry+v1 corpus of the repository's test data.
const corpus = "../../test/testdata/registry-v1-corpus"

func readCorpus(tb testing.TB) []catalogtest.Bundle {
	tb.Helper()
	bundles, err := catalogtest.Corpus(corpus)
	if err != nil || len(bundles) < 60 {
		tb.Fatalf("the corpus has %d bundles (%v)", len(bundles), err)
	}
	return bundles
}

// TestPublish_Corpus publishes the corpus's catalog: every bundle of every
// channel becomes a Package (a prerelease included), with its CSV's edges
// and install modes, and its PackageMetadata shows the CSV's metadata.
func TestPublish_Corpus(t *testing.T) {
	bundles := readCorpus(t)
	got := Publish(catalogtest.Catalog(bundles, "quay.io/corpus/"), Options{})
	if len(got.Refused) > 0 {
		t.Errorf("refused: %v", got.Refused)
	}
	packages := map[string]int{}
	for _, p := range got.Packages {
		packages[p.Labels[LabelPackage]+"/"+p.Annotations[AnnotationChannel]]++
	}
	var shapes struct{ replaces, skips, skipRange, prerelease, channels int }
	for _, b := range bundles {
		if b.CSV.Spec.Replaces != "" {
			shapes.replaces++
		}
		if len(b.CSV.Spec.Skips) > 0 {
			shapes.skips++
		}
		if b.CSV.Annotations["olm.skipRange"] != "" {
			shapes.skipRange++
		}
		if len(b.CSV.Spec.Version.Pre) > 0 {
			shapes.prerelease++
		}
		if len(b.Channels) > 1 {
			shapes.channels++
		}
		for _, ch := range b.Channels {
			ch = strings.TrimSpace(ch)
			if packages[b.Package+"/"+ch] != 1 {
				t.Errorf("%s channel %s: %d Packages", b.Package, ch, packages[b.Package+"/"+ch])
				continue
			}
			ref, err := RefName(b.Package, ch, DefaultDomain)
			if err != nil {
				t.Fatal(err)
			}
			version := b.CSV.Spec.Version.Version
			version.Build = nil
			i := slices.IndexFunc(got.Packages, func(p *datav1alpha1.Package) bool { return p.Name == ref+"."+version.String() })
			if i < 0 {
				t.Errorf("%s: no Package %s.%s", b.Package, ref, version)
				continue
			}
			p := got.Packages[i]
			e, _ := EntryOf(p.Labels, p.Annotations)
			if e.Replaces != b.CSV.Spec.Replaces || !slices.Equal(e.Skips, b.CSV.Spec.Skips) || e.SkipRange != b.CSV.Annotations["olm.skipRange"] {
				t.Errorf("%s: edges %+v, the CSV says replaces %q skips %v skipRange %q", p.Name, e, b.CSV.Spec.Replaces, b.CSV.Spec.Skips, b.CSV.Annotations["olm.skipRange"])
			}
		}
	}
	t.Logf("corpus shapes: %+v", shapes)
	if shapes.replaces == 0 || shapes.skips == 0 || shapes.skipRange == 0 || shapes.prerelease == 0 {
		t.Errorf("the corpus no longer holds every edge shape: %+v", shapes)
	}
	first := got.Packages[slices.IndexFunc(got.Packages, func(p *datav1alpha1.Package) bool { return p.Annotations[AnnotationBundle] == bundles[0].CSV.Name })]
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
		r := b.CSV.Annotations["olm.skipRange"]
		if r == "" {
			continue
		}
		if _, err := semver.ParseRange(r); err != nil {
			t.Errorf("%s: skipRange %q does not parse: %v", b.CSV.Name, r, err)
			continue
		}
		e := Entry{Package: b.Package, Bundle: b.CSV.Name, SkipRange: r}
		if !e.ReachedFrom(Entry{Package: b.Package, Bundle: "older", Version: "0.0.1"}) && strings.HasPrefix(r, "<") {
			t.Errorf("%s: skipRange %q does not reach 0.0.1", b.CSV.Name, r)
		}
	}
}
