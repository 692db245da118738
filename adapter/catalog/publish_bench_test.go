package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/rukpak-kapp/rukpak-kapp/test/catalogtest"
	"testing"
	"testing/fstest"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// largeCatalog is a catalog of n bundles made from the corpus: its
// bundles, each in three versions chained by replaces (150 is the issue's
// "catalog of 150 bundles").
func largeCatalog(b *testing.B, n int) *declcfg.DeclarativeConfig {
	b.Helper()
	return catalogtest.Catalog(catalogtest.Versions(readCorpus(b), n), "quay.io/corpus/")
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
