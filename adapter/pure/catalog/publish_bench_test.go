package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// largeCatalog is a catalog of n bundles made from the corpus: its bundles,
// each in three versions chained by replaces, package by package, until n
// bundles (150 is the "catalog of 150 bundles").
func largeCatalog(b *testing.B, n int) *declcfg.DeclarativeConfig {
	b.Helper()
	corpus := readCorpus(&testing.T{})
	if len(corpus) == 0 {
		b.Fatal("no corpus")
	}
	var bundles []corpusBundle
	for i := 0; len(bundles) < n; i++ {
		base := corpus[i%len(corpus)]
		for v := 0; v < 3 && len(bundles) < n; v++ {
			c := base
			c.pkg = fmt.Sprintf("%s-%d", base.pkg, i/len(corpus))
			c.csv = *base.csv.DeepCopy()
			c.csv.Name = fmt.Sprintf("%s.v%d", c.pkg, v)
			c.csv.Spec.Version.Major, c.csv.Spec.Version.Minor = uint64(v+1), 0
			c.csv.Spec.Version.Pre, c.csv.Spec.Version.Build = nil, nil
			c.csv.Spec.Replaces, c.csv.Spec.Skips = "", nil
			if v > 0 {
				c.csv.Spec.Replaces = fmt.Sprintf("%s.v%d", c.pkg, v-1)
			}
			delete(c.csv.Annotations, "olm.skipRange")
			bundles = append(bundles, c)
		}
	}
	return corpusCatalog(bundles)
}

// BenchmarkPublish publishes a catalog of 150 bundles, every bundle with its
// whole CSV or its metadata (alternately), and reports what kapp-controller
// would store: objects, bytes (as JSON), and the largest object.
func BenchmarkPublish(b *testing.B) {
	cfg := largeCatalog(b, 150)
	if pub := Publish(cfg, Options{}); len(pub.Refused) > 0 {
		b.Fatalf("refused: %v", pub.Refused)
	}
	var pub Published
	for b.Loop() {
		pub = Publish(cfg, Options{})
	}
	total, largest, objects := 0, 0, 0
	for _, o := range append(packagesAsAny(pub), metadataAsAny(pub)...) {
		data, err := json.Marshal(o)
		if err != nil {
			b.Fatal(err)
		}
		total += len(data)
		largest = max(largest, len(data))
		objects++
	}
	b.ReportMetric(float64(objects), "objects")
	b.ReportMetric(float64(total)/float64(objects), "bytes/object")
	b.ReportMetric(float64(total), "bytes")
	b.ReportMetric(float64(largest), "largest-bytes")
}

func packagesAsAny(p Published) []any {
	var out []any
	for _, x := range p.Packages {
		out = append(out, x)
	}
	return out
}

func metadataAsAny(p Published) []any {
	var out []any
	for _, x := range p.Metadata {
		out = append(out, x)
	}
	return out
}

// BenchmarkLoadAndPublish is what `rukpak-kapp catalog render` does with a
// catalog directory of 150 bundles: read it with declcfg, then publish.
func BenchmarkLoadAndPublish(b *testing.B) {
	var buf bytes.Buffer
	if err := declcfg.WriteYAML(*largeCatalog(b, 150), &buf); err != nil {
		b.Fatal(err)
	}
	files := fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: buf.Bytes()}}
	for b.Loop() {
		cfg, err := declcfg.LoadFS(context.Background(), files)
		if err != nil {
			b.Fatal(err)
		}
		if pub := Publish(cfg, Options{}); len(pub.Packages) == 0 {
			b.Fatal("nothing published")
		}
	}
	b.ReportMetric(float64(buf.Len()), "catalog-bytes")
}
