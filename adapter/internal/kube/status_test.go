package kube

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func statusWith(conds ...metav1.Condition) rukpakv1alpha2.BundleDeploymentStatus {
	st := rukpakv1alpha2.BundleDeploymentStatus{}
	for _, c := range conds {
		// As status.Compute keeps it for a condition that did not change.
		c.ObservedGeneration, c.LastTransitionTime = 1, metav1.NewTime(time.Unix(1700000000, 0))
		apimeta.SetStatusCondition(&st.Conditions, c)
	}
	return st
}

func drain(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// WriteStatus writes the status only when it changed, and records one
// Event per write however many conditions changed.
func TestWriteStatusWritesOnlyAChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bd := imageBD("web")
	k := fakekube.New(nil, bd)
	get(t, k, bd)
	recorder := events.NewFakeRecorder(10)

	unpacked := metav1.Condition{Type: rukpakv1alpha2.TypeUnpacked, Status: metav1.ConditionTrue, Reason: rukpakv1alpha2.ReasonUnpackSuccessful, Message: "Successfully unpacked."}
	installed := metav1.Condition{Type: rukpakv1alpha2.TypeInstalled, Status: metav1.ConditionTrue, Reason: rukpakv1alpha2.ReasonInstallationSucceeded, Message: "Installed."}
	failed := metav1.Condition{Type: rukpakv1alpha2.TypeInstalled, Status: metav1.ConditionFalse, Reason: rukpakv1alpha2.ReasonUpgradeFailed, Message: "Upgrade failed: the image cannot be pulled."}
	for _, step := range []struct {
		name   string
		status rukpakv1alpha2.BundleDeploymentStatus
		writes int
		event  string
	}{
		{"two conditions appear", statusWith(unpacked, installed), 1, "Normal InstallationSucceeded Installed: Installed.; Unpacked: Successfully unpacked."},
		{"nothing changed", statusWith(unpacked, installed), 0, ""},
		{"nothing changed, again", statusWith(unpacked, installed), 0, ""},
		{"a failure", statusWith(unpacked, failed), 1, "Warning UpgradeFailed Installed: Upgrade failed: the image cannot be pulled."},
	} {
		k.Reset()
		if err := WriteStatus(ctx, k.Client, recorder, bd, step.status); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := k.Count("", fakekube.StatusPatch, "BundleDeployment"); got != step.writes || len(k.Writes()) != step.writes {
			t.Errorf("%s: writes %v, want %d status patch", step.name, k.Writes(), step.writes)
		}
		got := drain(recorder)
		if step.event == "" && len(got) != 0 || step.event != "" && !cmp.Equal(got, []string{step.event}) {
			t.Errorf("%s: events %q, want %q", step.name, got, step.event)
		}
		stored := imageBD("web")
		get(t, k, stored)
		if !apiequality.Semantic.DeepEqual(stored.Status, step.status) {
			t.Errorf("%s: stored status (-want +got):\n%s", step.name, cmp.Diff(step.status, stored.Status))
		}
	}
}

// The writer given to the controllers alongside the BundleDeployment reconciler is the same
// locked status patch, with one Event for the types it names: a write from
// a stale read gets a conflict instead of replacing a newer status.
func TestConditionsWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bd := imageBD("web")
	k := fakekube.New(nil, bd)
	get(t, k, bd)
	recorder := events.NewFakeRecorder(10)
	write := ConditionsWriter(k.Client, recorder, rukpakv1alpha2.TypeUnpacked)

	stale := bd.DeepCopy()
	failed := metav1.Condition{Type: rukpakv1alpha2.TypeUnpacked, Status: metav1.ConditionFalse, Reason: rukpakv1alpha2.ReasonUnpackFailed, Message: "The registry refused."}
	before := bd.DeepCopy()
	bd.Status = statusWith(failed)
	if err := write(ctx, bd, before, before.Status.Conditions, bd.Status.Conditions); err != nil {
		t.Fatal(err)
	}
	if got := drain(recorder); !cmp.Equal(got, []string{"Warning UnpackFailed Unpacked: The registry refused."}) {
		t.Errorf("events %q", got)
	}
	staleBefore := stale.DeepCopy()
	stale.Status = statusWith(metav1.Condition{Type: rukpakv1alpha2.TypeUnpacked, Status: metav1.ConditionTrue, Reason: rukpakv1alpha2.ReasonUnpackSuccessful, Message: "Unpacked."})
	if err := write(ctx, stale, staleBefore, nil, stale.Status.Conditions); !apierrors.IsConflict(err) {
		t.Errorf("a write from a stale read: %v, want a conflict", err)
	}
	if got := drain(recorder); len(got) != 0 {
		t.Errorf("a refused write recorded %q", got)
	}
}
