package controller

import (
	"context"
	"errors"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// reportV1alpha1 is report's write for a BundleDeployment of rukpak's first
// API: the v1alpha2 status out, computed from facts as for any
// BundleDeployment, is
// mapped to the BundleDeployment's and its current Bundle's v1alpha1
// statuses (bundles.Status), written under the same decision d; the Bundles
// the current one supersedes go once it is installed.
func (r *Reconciler) reportV1alpha1(ctx context.Context, s *scope.Scope, facts status.Facts, out status.Outcome, d decision, p policy) (ctrl.Result, error) {
	g := s.Generated
	if g == nil {
		// A step before the Bundles were read failed: its error is the news,
		// the status waits for a reconcile that read them.
		return d.result, d.err
	}
	res := bundles.Status(bundles.Facts{
		BD: g.BD, Bundle: g.Bundle, BundleFailure: g.Failure, Status: out.Status, Resolved: facts.Fetched,
		Invalid: status.InvalidContent(facts, s.View.Spec.ProvisionerClassName), Now: facts.Now,
	})
	write := d.write || newsOfBundle(g.BD.Status.Conditions, res.BD.Conditions)
	var errs []error
	if res.Bundle != nil && (write || g.Bundle.Status.Phase == "") {
		// A Bundle just made says Pending at once, as rukpak's did.
		errs = append(errs, r.bundles.Report(ctx, g.Bundle, *res.Bundle))
	}
	if write {
		if p == installing {
			r.progress.Forget(s.BD.Name, s.BD.UID)
		}
		if c := apimeta.FindStatusCondition(res.BD.Conditions, rukpakv1alpha1.TypeInstalled); c != nil {
			r.states.set(s.BD.Name, string(c.Status), c.Reason)
		}
		errs = append(errs, kube.WriteV1alpha1Status(ctx, r.client, r.recorder, s.BD, res.BD))
	}
	if res.Installed && p == installing {
		errs = append(errs, r.bundles.Prune(ctx, g.BD, g.Listed, g.Bundle.Name))
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, scope.Redacted(err)
	}
	return d.result, d.err
}

// newsOfBundle says HasValidBundle changed in a way written at once even
// while the install is under way (when the v1alpha2 status is held): a
// failure, or a change out of a known state (a new template's Bundle, a
// failure fixed). Only the first wait for a Bundle to unpack is held.
func newsOfBundle(before, after []metav1.Condition) bool {
	b := apimeta.FindStatusCondition(before, rukpakv1alpha1.TypeHasValidBundle)
	a := apimeta.FindStatusCondition(after, rukpakv1alpha1.TypeHasValidBundle)
	if a == nil || (b != nil && b.Status == a.Status && b.Reason == a.Reason) {
		return false
	}
	return a.Status != metav1.ConditionTrue || (b != nil && b.Reason != rukpakv1alpha1.ReasonUnpackPending)
}
