package deployments

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func v1alpha1BD(labels map[string]string) *rukpakv1alpha1.BundleDeployment {
	return &rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "olm", UID: types.UID("uid-olm"), Generation: 1},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Template: rukpakv1alpha1.BundleTemplate{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: rukpakv1alpha1.BundleSource{
				Type: rukpakv1alpha1.SourceTypeHTTP, HTTP: &rukpakv1alpha1.HTTPSource{URL: "http://files.example/olm.tgz"}}},
		}},
	}
}

// made is the Bundle Desired makes for bd, as stored, created age ago.
func made(bd *rukpakv1alpha1.BundleDeployment, age time.Duration, finalizers ...string) *rukpakv1alpha1.Bundle {
	b := templates.Desired(bd)
	b.CreationTimestamp = metav1.NewTime(time.Now().Add(-age).Truncate(time.Second))
	b.Finalizers = finalizers
	return b
}

// generate is a reconcile's look at bd's Bundles: List, then Make.
func generate(s *Set, bd *rukpakv1alpha1.BundleDeployment, makeMissing bool) (*scope.Generated, error) {
	g, err := s.List(context.Background(), bd)
	if err != nil {
		return g, err
	}
	return g, s.Make(context.Background(), g, makeMissing)
}

func TestList_WritesNothing(t *testing.T) {
	old := v1alpha1BD(map[string]string{"v": "0"})
	bd := v1alpha1BD(map[string]string{"v": "1"})
	k := fakekube.New(nil, made(old, time.Hour, "core.rukpak.io/delete-cached-bundle"))
	g, err := New(k.Client, k.Direct, nil).List(context.Background(), bd)
	if err != nil || g.Bundle != nil || g.Missing == nil || g.Missing.Name != templates.Desired(bd).Name || len(g.Listed) != 1 {
		t.Fatalf("%+v, %v", g, err)
	}
	// Neither the missing Bundle nor rukpak's finalizer: those are Make's.
	k.ExpectWrites(t, "a list")
}

func TestGenerate_MakesTheTemplatesBundleOnce(t *testing.T) {
	bd := v1alpha1BD(nil)
	k := fakekube.New(nil)
	s := New(k.Client, k.Direct, nil)

	g, err := generate(s, bd, false)
	if err != nil || g.Bundle != nil || g.Failure == "" {
		t.Fatalf("without create: %+v, %v", g, err)
	}
	k.ExpectWrites(t, "looking without create")

	g, err = generate(s, bd, true)
	if err != nil || g.Bundle == nil || g.Bundle.Name != templates.Desired(bd).Name || len(g.Listed) != 1 {
		t.Fatalf("first: %+v, %v", g, err)
	}
	k.ExpectWrites(t, "the first reconcile", "create Bundle /"+g.Bundle.Name)
	k.Reset()
	if g, err = generate(s, bd, true); err != nil || g.Bundle == nil {
		t.Fatalf("again: %+v, %v", g, err)
	}
	k.ExpectWrites(t, "the next reconcile")
}

func TestGenerate_FindsABundleTheCacheHasNotSeen(t *testing.T) {
	bd := v1alpha1BD(nil)
	k := fakekube.New(nil, made(bd, 0))
	// The informer cache lags: its list misses the Bundle made a moment ago.
	s := New(&emptyLister{Client: k.Client}, k.Direct, nil)
	g, err := generate(s, bd, true)
	if err != nil || g.Bundle == nil || g.Bundle.ResourceVersion == "" {
		t.Fatalf("%+v, %v", g, err)
	}
	if n := k.Count(fakekube.ViaDirect, fakekube.Get, "Bundle"); n != 1 {
		t.Fatalf("read the Bundle from the API server %d times", n)
	}
}

func TestGenerate_ABundleOfAnotherIncarnationIsNotTaken(t *testing.T) {
	bd := v1alpha1BD(nil)
	other := made(bd, time.Hour)
	other.OwnerReferences[0].UID = "an-earlier-olm"
	k := fakekube.New(nil, other)
	s := New(&emptyLister{Client: k.Client}, k.Direct, nil)
	g, err := generate(s, bd, true)
	if err == nil || g.Bundle != nil || !strings.Contains(g.Failure, "is not this BundleDeployment's") || !scope.Permanent(err) {
		t.Fatalf("%+v, %v", g, err)
	}
}

func TestGenerate_ARefusedBundleIsAPermanentFailure(t *testing.T) {
	bd := v1alpha1BD(nil)
	k := fakekube.New(nil)
	k.Fail = func(c fakekube.Call) error {
		if c.Verb == fakekube.Create {
			return apierrors.NewInvalid(schema.GroupKind{Group: "core.rukpak.io", Kind: "Bundle"}, c.Name, nil)
		}
		return nil
	}
	g, err := generate(New(k.Client, k.Direct, nil), bd, true)
	if err == nil || !scope.Permanent(err) || !strings.Contains(g.Failure, "fix spec.template") {
		t.Fatalf("%+v, %v", g, err)
	}
	k.Fail = func(c fakekube.Call) error {
		if c.Verb == fakekube.Create {
			return apierrors.NewServiceUnavailable("etcd is slow")
		}
		return nil
	}
	g, err = generate(New(k.Client, k.Direct, nil), bd, true)
	if err == nil || scope.Permanent(err) || g.Failure == "" {
		t.Fatalf("a transient failure is retried: %+v, %v", g, err)
	}
}

func TestGenerate_TakesRukpaksFinalizerOff(t *testing.T) {
	old := v1alpha1BD(map[string]string{"v": "0"})
	bd := v1alpha1BD(map[string]string{"v": "1"})
	k := fakekube.New(nil, made(old, time.Hour, "core.rukpak.io/delete-cached-bundle"), made(bd, time.Minute, "core.rukpak.io/delete-cached-bundle"))
	g, err := generate(New(k.Client, k.Direct, nil), bd, true)
	if err != nil || g.Bundle == nil || len(g.Listed) != 2 {
		t.Fatalf("%+v, %v", g, err)
	}
	k.ExpectWrites(t, "a take-over", "patch Bundle /"+templates.Desired(old).Name, "patch Bundle /"+templates.Desired(bd).Name)
	for _, b := range []*rukpakv1alpha1.BundleDeployment{old, bd} {
		live := &rukpakv1alpha1.Bundle{}
		if err := k.Raw.Get(context.Background(), client.ObjectKey{Name: templates.Desired(b).Name}, live); err != nil || len(live.Finalizers) != 0 {
			t.Fatalf("%s: finalizers %v, %v", templates.Desired(b).Name, live.Finalizers, err)
		}
	}
}

func TestReportAndPrune(t *testing.T) {
	old := v1alpha1BD(map[string]string{"v": "0"})
	bd := v1alpha1BD(map[string]string{"v": "1"})
	foreign := made(v1alpha1BD(map[string]string{"v": "2"}), 2*time.Hour)
	foreign.OwnerReferences[0].UID = "someone-else"
	k := fakekube.New(nil, made(old, time.Hour), made(bd, time.Minute), foreign)
	s := New(k.Client, k.Direct, nil)
	g, err := generate(s, bd, true)
	if err != nil {
		t.Fatal(err)
	}
	st := rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseUnpacked}
	if err := s.Report(context.Background(), g.Bundle, st); err != nil {
		t.Fatal(err)
	}
	if err := s.Report(context.Background(), &rukpakv1alpha1.Bundle{ObjectMeta: g.Bundle.ObjectMeta, Status: st}, st); err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(context.Background(), bd, g.Listed, g.Bundle.Name); err != nil {
		t.Fatal(err)
	}
	k.ExpectWrites(t, "report twice, then prune", "status-patch Bundle /"+g.Bundle.Name, "delete Bundle /"+templates.Desired(old).Name)
	live := &rukpakv1alpha1.Bundle{}
	if err := k.Raw.Get(context.Background(), client.ObjectKeyFromObject(g.Bundle), live); err != nil || live.Status.Phase != rukpakv1alpha1.PhaseUnpacked {
		t.Fatalf("the status was not stored: %+v, %v", live.Status, err)
	}
	if err := k.Raw.Get(context.Background(), client.ObjectKeyFromObject(foreign), live); err != nil {
		t.Fatalf("a Bundle bd does not control was deleted: %v", err)
	}
}

// emptyLister is a client whose informer cache has not seen any Bundle yet.
type emptyLister struct{ client.Client }

func (e *emptyLister) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*rukpakv1alpha1.BundleList); ok {
		return nil
	}
	return e.Client.List(ctx, list, opts...)
}
