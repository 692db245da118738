package store

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// TestChannel: a channel is the entries of its package's catalog Packages
// in the namespace that name its refName; another channel, namespace or
// package, or a Package of no catalog, is not in it.
func TestChannel(t *testing.T) {
	t.Parallel()
	pkg := func(ns, name, channel, version string) client.Object {
		e := catalog.Entry{Package: name, Channel: channel, Bundle: name + ".v" + version, Version: version, RefName: channel + "." + name}
		m := PackagesMetadata()
		m.Namespace, m.Name, m.Labels, m.Annotations = ns, e.RefName+"."+version, map[string]string{catalog.LabelPackage: name}, e.Annotations()
		return m
	}
	noCatalog := PackagesMetadata()
	noCatalog.Namespace, noCatalog.Name, noCatalog.Labels = "ops", "stable.etcd.2.0.0", map[string]string{catalog.LabelPackage: "etcd"}
	packages := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(
		pkg("ops", "etcd", "stable", "1.0.0"), pkg("ops", "etcd", "stable", "1.1.0"), pkg("ops", "etcd", "beta", "1.2.0"),
		pkg("dev", "etcd", "stable", "9.0.0"), pkg("ops", "prometheus", "stable", "1.0.0"), noCatalog,
	).Build()
	s := &Store{packages: packages}
	got, err := s.Channel(context.Background(), "ops", "etcd", "stable.etcd")
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, e := range got {
		versions = append(versions, e.Version)
	}
	slices.Sort(versions)
	if !slices.Equal(versions, []string{"1.0.0", "1.1.0"}) {
		t.Errorf("channel stable of etcd in ops: %v, want [1.0.0 1.1.0]", versions)
	}
}
