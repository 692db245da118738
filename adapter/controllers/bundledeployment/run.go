package bundledeployment

import (
	"context"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kappapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// The routes' runs: which steps, in which order, and which mode is asked
// to do what. What each mode does is the mode's.

// ending is how a run ends: with its outcome reported (the status
// written once), or without a report: the BundleDeployment is gone or
// handed back (its status is the new owner's), or another writer changed
// it first (result asks for another look).
type ending struct {
	report bool
	o      scope.Outcome
	result ctrl.Result
	err    error
}

// reported ends a run with o reported.
func reported(o scope.Outcome) ending { return ending{report: true, o: o} }

// run takes l's route's steps in order; the first that ends the run says
// how. A failed read ends it before any step.
func (r *BundleDeploymentReconciler) run(ctx context.Context, l *loaded) ending {
	s := l.s
	switch l.route {
	case HandBack:
		if l.readErr != nil {
			return ending{err: l.readErr}
		}
		return ending{err: r.handBack(ctx, s)}
	case Remove:
		if l.readErr != nil {
			return reported(scope.Outcome{Err: l.readErr})
		}
		if l.firstAPI {
			// rukpak's finalizers come off the generated Bundles, so their
			// deletion with the BundleDeployment is not held; the removal
			// goes on whatever this says (the next look tries again).
			if o := r.bundles.Prepare(ctx, s.Generated, false); o != nil && o.Err != nil {
				log.FromContext(ctx).Error(scope.Redacted(o.Err), "rukpak's finalizer stays on a generated Bundle; the removal goes on")
			}
		}
		if gone, o := r.remove(ctx, s); !gone {
			return reported(o)
		}
		return ending{}
	}
	if l.readErr != nil {
		return reported(scope.Outcome{Err: scope.InStep(scope.StepStore, "%w", l.readErr)})
	}
	if e, stop := r.prepare(ctx, l); stop {
		return e
	}
	return reported(r.install(ctx, s, l.route, l.modeErr))
}

// prepare is an install's first step: what load found missing is made:
// the adapter's finalizer (where the admission policy did not add it) and,
// for rukpak's first API, the template's Bundle. stop ends the run with e.
func (r *BundleDeploymentReconciler) prepare(ctx context.Context, l *loaded) (e ending, stop bool) {
	err := kube.PatchFinalizers(ctx, r.client, l.s.BD, controllerutil.AddFinalizer)
	switch {
	case apierrors.IsConflict(err):
		// Another writer was first; look again with backoff.
		return ending{result: ctrl.Result{Requeue: true}}, true
	case err != nil:
		return reported(scope.Outcome{Err: scope.InStep(scope.StepStore, "add finalizer: %w", err)}), true
	}
	if !l.firstAPI {
		return ending{}, false
	}
	if o := r.bundles.Prepare(ctx, l.s.Generated, true); o != nil {
		return reported(*o), true
	}
	return ending{}, false
}

// install runs an install route: the serve mode, or the App mode once a
// PackageInstall left from the serve mode is gone (what it installed stays
// in place for the App to adopt).
func (r *BundleDeploymentReconciler) install(ctx context.Context, s *scope.Scope, route Route, modeErr error) scope.Outcome {
	switch {
	case route == InstallInvalid:
		return scope.Outcome{Err: modeErr}
	case !r.kapp.Ready():
		// Waits, without an error: the API's arrival wakes every
		// BundleDeployment.
		return scope.Outcome{Failure: &status.Failure{Kind: status.KappControllerMissing, Message: kappapi.Missing(translate.Namespaces(r.set.Config))}}
	case route == InstallServe:
		return r.observeCustom(ctx, s, r.serve.Install(ctx, s))
	}
	if gone, err := r.serve.Leave(ctx, s); err != nil || !gone {
		return scope.Outcome{Err: err}
	}
	return r.observeCustom(ctx, s, r.app.Install(ctx, s))
}

// observeCustom adds the installed custom resources to the objects an
// install's Healthy is judged by, once its workloads were listed.
func (r *BundleDeploymentReconciler) observeCustom(ctx context.Context, s *scope.Scope, o scope.Outcome) scope.Outcome {
	in := s.Facts.Installed
	if in == nil || s.Facts.InstalledFailure != "" {
		return o
	}
	observe := r.custom.Observe
	if kube.FirstJudgment(s.BD, s.Facts.App) {
		// The first judgment of a deploy reads the API server, as the
		// workloads' does (kube.FirstJudgment); the informers the kinds
		// need start all the same, for the changes that follow.
		observe = func(ctx context.Context, app *kappctrlv1alpha1.App, name string, in *status.Installed) error {
			if err := r.custom.Observe(ctx, app, name, &status.Installed{Rules: in.Rules}); err != nil {
				return err
			}
			return r.custom.ObserveLive(ctx, r.direct, app, name, in)
		}
	}
	if err := observe(ctx, s.Facts.App, s.BD.Name, in); err != nil {
		s.Facts.InstalledFailure = err.Error()
		if o.Retry == nil {
			o.Retry = err
		}
	}
	return o
}

// remove deletes what the BundleDeployment installed: the serve mode's
// PackageInstall first, then the App; gone once the App is.
func (r *BundleDeploymentReconciler) remove(ctx context.Context, s *scope.Scope) (bool, scope.Outcome) {
	if !r.kapp.Ready() {
		// No PackageInstall can exist.
	} else if waits, err := r.serve.Finalize(ctx, s); waits || err != nil {
		return false, scope.Outcome{Err: err}
	}
	gone, err := r.app.Finalize(ctx, s)
	if err == nil && gone {
		err = r.finish(ctx, s)
	}
	return gone && err == nil, scope.Outcome{Err: err}
}

// handBack releases a BundleDeployment whose class is no longer claimed.
func (r *BundleDeploymentReconciler) handBack(ctx context.Context, s *scope.Scope) error {
	done, err := r.app.Release(ctx, s)
	if err != nil || !done {
		return err
	}
	return r.finish(ctx, s)
}
