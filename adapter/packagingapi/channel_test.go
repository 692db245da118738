package packagingapi

import (
	"context"
	"slices"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// The upgrade plan reads a channel through kapp-controller's API itself
// (Channel), the adapter through its cache (Packages.Channel): both make
// the same nodes, a Package whose image cannot be read a node without it,
// named in unreadable; a list that fails says whose API failed.
func TestChannel(t *testing.T) {
	t.Parallel()
	noImage := catalogPackage("ops", "p", "beta", "1.0.2", "p.1.0.1", true)
	delete(noImage.Annotations, catalog.AnnotationImage)
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}},
		catalogPackage("ops", "p", "beta", "1.0.0", "", true), catalogPackage("ops", "p", "beta", "1.0.1", "p.1.0.0", false), noImage}
	var gets int
	cache, direct := cluster(t, &gets, objs...)
	api := fake.NewClientBuilder().WithScheme(cache.(client.Client).Scheme()).WithObjects(objs...).
		WithIndex(&datav1alpha1.Package{}, "spec.refName", func(o client.Object) []string { return []string{o.(*datav1alpha1.Package).Spec.RefName} }).Build()
	fromAPI, unreadable, err := Channel(context.Background(), api, "ops", "beta.p.example.com")
	if err != nil {
		t.Fatal(err)
	}
	fromCache, _, err := NewPackages(cache, direct, global).Channel(context.Background(), "ops", "beta.p.example.com")
	if err != nil {
		t.Fatal(err)
	}
	byVersion := func(a, b catalog.Node) int { return strings.Compare(a.Entry.Version, b.Entry.Version) }
	slices.SortFunc(fromAPI, byVersion)
	slices.SortFunc(fromCache, byVersion)
	if len(fromAPI) != 3 || fromAPI[2].Image != "" || fromAPI[1].Image != "registry.example/inline/p:1.0.1" {
		t.Errorf("nodes %+v: want all three, 1.0.2 without an image, 1.0.1's from its template", fromAPI)
	}
	if len(fromAPI) != len(fromCache) {
		t.Fatalf("kapp-controller's API: %+v; the cache: %+v", fromAPI, fromCache)
	}
	for i := range fromAPI {
		if fromAPI[i].Entry.Version != fromCache[i].Entry.Version || fromAPI[i].Image != fromCache[i].Image {
			t.Errorf("node %d: kapp-controller's API %+v, the cache %+v", i, fromAPI[i], fromCache[i])
		}
	}
	if unreadable == nil || !strings.Contains(unreadable.Error(), "beta.p.example.com.1.0.2") || !strings.Contains(unreadable.Error(), "names no bundle image") {
		t.Errorf("unreadable = %v, want the Package without an image named", unreadable)
	}

	down := interceptor.NewClient(api.(client.WithWatch), interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	}})
	if _, _, err := Channel(context.Background(), down, "ops", "beta.p.example.com"); err == nil || !strings.Contains(err.Error(), "kapp-controller's packaging API") {
		t.Errorf("a list that failed: %v", err)
	}
}
