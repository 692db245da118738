// Package catalogtest makes OLM file-based catalogs of the repository's
// registry+v1 corpus (test/testdata/registry-v1-corpus: 61 real bundles,
// one version of one operator each), for the catalog tests and benchmarks.
package catalogtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"sigs.k8s.io/yaml"
)

// Bundle is one bundle of the corpus: its package and channels, as its
// metadata names them, and its CSV (parsed, and as JSON).
type Bundle struct {
	Package, DefaultChannel string
	Channels                []string
	CSV                     operatorsv1alpha1.ClusterServiceVersion
	CSVJSON                 []byte
}

// Corpus reads every bundle under dir (<operator>/<version>/).
func Corpus(dir string) ([]Bundle, error) {
	anns, err := filepath.Glob(filepath.Join(dir, "*", "*", "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	if len(anns) == 0 {
		return nil, fmt.Errorf("no bundle under %s", dir)
	}
	var out []Bundle
	for _, ann := range anns {
		b, err := read(filepath.Dir(filepath.Dir(ann)))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func read(root string) (Bundle, error) {
	var meta struct{ Annotations map[string]string }
	data, err := os.ReadFile(filepath.Join(root, "metadata", "annotations.yaml"))
	if err != nil {
		return Bundle{}, err
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return Bundle{}, fmt.Errorf("%s: %w", root, err)
	}
	b := Bundle{
		Package:        meta.Annotations["operators.operatorframework.io.bundle.package.v1"],
		DefaultChannel: meta.Annotations["operators.operatorframework.io.bundle.channel.default.v1"],
	}
	for _, ch := range strings.Split(meta.Annotations["operators.operatorframework.io.bundle.channels.v1"], ",") {
		b.Channels = append(b.Channels, strings.TrimSpace(ch))
	}
	if b.DefaultChannel == "" {
		b.DefaultChannel = b.Channels[0]
	}
	csvs, _ := filepath.Glob(filepath.Join(root, "manifests", "*clusterserviceversion*"))
	if len(csvs) != 1 {
		return Bundle{}, fmt.Errorf("%s: %d CSVs", root, len(csvs))
	}
	if data, err = os.ReadFile(csvs[0]); err != nil {
		return Bundle{}, err
	}
	if b.CSVJSON, err = yaml.YAMLToJSON(data); err != nil {
		return Bundle{}, fmt.Errorf("%s: %w", csvs[0], err)
	}
	if err := json.Unmarshal(b.CSVJSON, &b.CSV); err != nil {
		return Bundle{}, fmt.Errorf("%s: %w", csvs[0], err)
	}
	return b, nil
}

// Catalog is the catalog a catalog author would write for bundles: every
// bundle in each channel its metadata names, with the edges its CSV
// declares (spec.replaces, spec.skips, the olm.skipRange annotation); every
// other bundle carries its whole CSV (olm.bundle.object), the rest its
// metadata (olm.csv.metadata); the first bundle is deprecated. Images are
// imagePrefix + package + ":" + version.
func Catalog(bundles []Bundle, imagePrefix string) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	seen := map[string]bool{}
	for i, b := range bundles {
		if !seen[b.Package] {
			seen[b.Package] = true
			cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: b.Package, DefaultChannel: b.DefaultChannel})
		}
		e := declcfg.ChannelEntry{Name: b.CSV.Name, Replaces: b.CSV.Spec.Replaces, Skips: b.CSV.Spec.Skips, SkipRange: b.CSV.Annotations["olm.skipRange"]}
		for _, ch := range b.Channels {
			if at := slices.IndexFunc(cfg.Channels, func(c declcfg.Channel) bool { return c.Package == b.Package && c.Name == ch }); at >= 0 {
				cfg.Channels[at].Entries = append(cfg.Channels[at].Entries, e)
				continue
			}
			cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: b.Package, Name: ch, Entries: []declcfg.ChannelEntry{e}})
		}
		form := property.MustBuildBundleObject(b.CSVJSON)
		if i%2 == 1 {
			form = property.MustBuildCSVMetadata(b.CSV)
		}
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: b.Package, Name: b.CSV.Name,
			Image:      imagePrefix + b.Package + ":" + b.CSV.Spec.Version.String(),
			Properties: []property.Property{property.MustBuildPackage(b.Package, b.CSV.Spec.Version.String()), form}})
	}
	cfg.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecation, Package: bundles[0].Package, Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: bundles[0].CSV.Name}, Message: "use a newer version"}}}}
	return cfg
}

// Versions makes n bundles of the corpus: each corpus bundle in three
// versions (1.0.0, 2.0.0, 3.0.0) chained by replaces, package after
// package, the corpus repeated under new package names when n needs it.
func Versions(corpus []Bundle, n int) []Bundle { return VersionsPer(corpus, n, 3) }

// VersionsPer is Versions with per versions of each package (1.0.0 up to
// per.0.0).
func VersionsPer(corpus []Bundle, n, per int) []Bundle {
	var out []Bundle
	for i := 0; len(out) < n; i++ {
		base := corpus[i%len(corpus)]
		for v := 0; v < per && len(out) < n; v++ {
			b := base
			b.Package = fmt.Sprintf("%s-%d", base.Package, i/len(corpus))
			b.CSV = *base.CSV.DeepCopy()
			b.CSV.Name = fmt.Sprintf("%s.v%d", b.Package, v)
			b.CSV.Spec.Version.Major, b.CSV.Spec.Version.Minor, b.CSV.Spec.Version.Patch = uint64(v+1), 0, 0
			b.CSV.Spec.Version.Pre, b.CSV.Spec.Version.Build = nil, nil
			b.CSV.Spec.Replaces, b.CSV.Spec.Skips = "", nil
			if v > 0 {
				b.CSV.Spec.Replaces = fmt.Sprintf("%s.v%d", b.Package, v-1)
			}
			delete(b.CSV.Annotations, "olm.skipRange")
			b.CSVJSON, _ = json.Marshal(b.CSV)
			out = append(out, b)
		}
	}
	return out
}
