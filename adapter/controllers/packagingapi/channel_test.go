package packagingapi

import (
	"context"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// The walk and the upgrade webhook read a channel the same way: every
// Package of an entry is a node; one whose image cannot be read is a node
// without it, named in unreadable; a list that fails says whose API failed.
func TestChannel(t *testing.T) {
	t.Parallel()
	scheme := runtime.NewScheme()
	if err := datav1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	pkg := func(version, replaces string, image bool) client.Object {
		e := catalog.Entry{Package: "p", Channel: "beta", Bundle: "p." + version, Version: version, Replaces: replaces, RefName: "beta.p.example.com"}
		ann := e.Annotations()
		if image {
			ann[catalog.AnnotationImage] = "registry.example/p:" + version
		}
		return &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: e.RefName + "." + version, Labels: map[string]string{catalog.LabelPackage: "p"}, Annotations: ann},
			Spec: datav1alpha1.PackageSpec{RefName: e.RefName, Version: version}}
	}
	byRefName := func(o client.Object) []string { return []string{o.(*datav1alpha1.Package).Spec.RefName} }
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pkg("1.0.0", "", true), pkg("1.0.1", "p.1.0.0", false), pkg("1.2.0", "p.1.0.1", true)).
		WithIndex(&datav1alpha1.Package{}, "spec.refName", byRefName).Build()
	nodes, unreadable, err := Channel(context.Background(), c, "ops", "beta.p.example.com")
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, n := range nodes {
		images[n.Entry.Version] = n.Image
	}
	if len(nodes) != 3 || images["1.0.1"] != "" || images["1.2.0"] != "registry.example/p:1.2.0" {
		t.Errorf("nodes %+v: want all three, 1.0.1 without an image", nodes)
	}
	if unreadable == nil || !strings.Contains(unreadable.Error(), "beta.p.example.com.1.0.1") || !strings.Contains(unreadable.Error(), "names no bundle image") {
		t.Errorf("unreadable = %v, want the Package without an image named", unreadable)
	}

	down := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	}})
	if _, _, err := Channel(context.Background(), down, "ops", "beta.p.example.com"); err == nil || !strings.Contains(err.Error(), "kapp-controller's packaging API") {
		t.Errorf("a list that failed: %v", err)
	}
}
