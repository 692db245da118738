package packagingapi

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkPackagesChannel reads one channel's graph, as the upgrade
// webhook does for each move it judges, in a namespace of 5,000 catalog
// Packages (500 OLM packages of 10 versions) alongside a global packaging
// namespace of 1,000. The reads go through controller-runtime's fake
// client with the adapter's indexes, which evaluates the index of every
// object of the namespace at each list: the adapter's informer cache looks
// the index up instead, so this is the slower of the two.
func BenchmarkPackagesChannel(b *testing.B) {
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}}
	for ns, pkgs := range map[string]int{"ops": 500, global: 100} {
		for i := range pkgs {
			for v := range 10 {
				replaces := ""
				if v > 0 {
					replaces = fmt.Sprintf("p%d.1.0.%d", i, v-1)
				}
				objs = append(objs, catalogPackage(ns, fmt.Sprintf("p%d", i), "stable", fmt.Sprintf("1.0.%d", v), replaces, true))
			}
		}
	}
	var gets int
	cache, direct := cluster(b, &gets, objs...)
	p := NewPackages(cache, direct, global)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		g, err := p.Channel(ctx, "ops", "stable.p250.example.com")
		if err != nil || len(g.Nodes) != 10 {
			b.Fatalf("%d nodes, %v", len(g.Nodes), err)
		}
	}
}
