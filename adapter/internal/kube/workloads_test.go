package kube

import (
	"context"
	"errors"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func TestObserveWorkloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	owned := func(bd string) map[string]string {
		return map[string]string{rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: bd}
	}
	objs := fakekube.New(nil,
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", Labels: owned("web")}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "db", Labels: owned("web")}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "agent", Labels: owned("web")}},
		// Another BundleDeployment's, and one nobody installed.
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "other", Labels: owned("other")}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "by-hand"}},
	)
	installed := imageBD("web", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Status.Conditions = []metav1.Condition{{Type: rukpakv1alpha2.TypeInstalled, Status: metav1.ConditionTrue, Reason: rukpakv1alpha2.ReasonInstallationSucceeded}}
	})

	t.Run("a deployed install lists the workloads it installed, and only those", func(t *testing.T) {
		t.Parallel()
		facts := &status.Facts{}
		if err := ObserveWorkloads(ctx, objs.Client, imageBD("web"), facts, true); err != nil {
			t.Fatal(err)
		}
		if facts.Installed == nil {
			t.Fatal("no installed objects listed")
		}
		var got []string
		for _, u := range facts.Installed.Objects {
			got = append(got, u.GetKind()+" "+u.GetName())
		}
		if want := []string{"Deployment web", "StatefulSet db", "DaemonSet agent"}; !slices.Equal(got, want) {
			t.Fatalf("listed %q, want %q", got, want)
		}
	})

	t.Run("an install that stored Installed=True is looked at while a new generation deploys", func(t *testing.T) {
		t.Parallel()
		facts := &status.Facts{}
		if err := ObserveWorkloads(ctx, objs.Client, installed, facts, false); err != nil || facts.Installed == nil {
			t.Fatalf("ObserveWorkloads: %v, workloads %+v", err, facts.Installed)
		}
	})

	t.Run("nothing installed yet: no list at all", func(t *testing.T) {
		t.Parallel()
		k := fakekube.New(nil)
		facts := &status.Facts{}
		if err := ObserveWorkloads(ctx, k.Client, imageBD("web"), facts, false); err != nil || facts.Installed != nil {
			t.Fatalf("ObserveWorkloads: %v, workloads %+v", err, facts.Installed)
		}
		if calls := k.Calls(); len(calls) != 0 {
			t.Errorf("listed %v before anything was installed", calls)
		}
	})

	t.Run("a failed list is the fact and the error", func(t *testing.T) {
		t.Parallel()
		k := fakekube.New(nil)
		k.Fail = func(c fakekube.Call) error {
			if c.Kind == "StatefulSet" {
				return errors.New("the cache is not synced")
			}
			return nil
		}
		facts := &status.Facts{}
		err := ObserveWorkloads(ctx, k.Client, installed, facts, true)
		if err == nil || facts.InstalledFailure == "" || facts.Installed == nil {
			t.Fatalf("ObserveWorkloads: %v, failure %q, workloads %+v", err, facts.InstalledFailure, facts.Installed)
		}
	})
}
