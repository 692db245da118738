package kube

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// EnqueueMatching sends what its filter picks, as listed, to the channel, without
// waiting for a reader; once its context has ended it sends nothing.
func TestEnqueueMatching(t *testing.T) {
	failed := func(bd *rukpakv1alpha2.BundleDeployment) {
		meta.SetStatusCondition(&bd.Status.Conditions, metav1.Condition{Type: "Unpacked", Status: metav1.ConditionFalse, Reason: "UnpackFailed"})
	}
	k := fakekube.New(nil, imageBD("a", failed), imageBD("b"), imageBD("c", failed))
	picked := func(bd *rukpakv1alpha2.BundleDeployment) bool { return len(bd.Status.Conditions) > 0 }

	to := make(chan event.GenericEvent)
	if err := EnqueueMatching(context.Background(), k.Client, &rukpakv1alpha2.BundleDeploymentList{}, picked, to); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		select {
		case e := <-to:
			got = append(got, e.Object.GetName())
		case <-time.After(5 * time.Second):
			t.Fatalf("woke %v, want a and c", got)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("woke %v, want a and c", got)
	}
	select {
	case e := <-to:
		t.Errorf("woke %s too", e.Object.GetName())
	case <-time.After(50 * time.Millisecond):
	}

	// A context that has ended sends nothing, though a reader waits.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := EnqueueMatching(ctx, k.Client, &rukpakv1alpha2.BundleDeploymentList{}, picked, to); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-to:
		t.Errorf("woke %s after the context ended", e.Object.GetName())
	case <-time.After(100 * time.Millisecond):
	}
}
