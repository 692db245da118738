package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestOrphaning(t *testing.T) {
	t.Parallel()
	bd := func(finalizers ...string) *rukpakv1alpha2.BundleDeployment {
		return &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a", Finalizers: finalizers}}
	}
	dependent := func(owned bool, labels map[string]string) *metav1.ObjectMeta {
		m := &metav1.ObjectMeta{Name: "a", Labels: labels}
		if owned {
			m.OwnerReferences = translate.OwnerReferences(bd())
		}
		return m
	}
	mine := translate.OwnerLabels("a")
	for _, tt := range []struct {
		name string
		bd   *rukpakv1alpha2.BundleDeployment
		o    metav1.Object
		want bool
	}{
		{"the garbage collector's orphan finalizer", bd(Finalizer, metav1.FinalizerOrphanDependents), dependent(true, mine), true},
		{"orphan finalizer, no dependent read", bd(metav1.FinalizerOrphanDependents), nil, true},
		{"a background or foreground delete", bd(Finalizer), dependent(true, mine), false},
		{"foreground: the garbage collector's finalizer is not orphaning", bd(Finalizer, metav1.FinalizerDeleteDependents), dependent(true, mine), false},
		{"the owner reference already taken off", bd(Finalizer), dependent(false, mine), true},
		{"no owner reference, another BundleDeployment's labels", bd(Finalizer), dependent(false, translate.OwnerLabels("b")), false},
		{"no dependent", bd(Finalizer), nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Orphaning(tt.bd, tt.o); got != tt.want {
				t.Errorf("Orphaning = %v, want %v", got, tt.want)
			}
		})
	}
}
