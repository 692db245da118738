package controller

import (
	"context"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/kappapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// The routes' runs: which mode is asked to do what, in which order. What
// each mode does is the mode's.

// install runs an install route: the serve mode, or the App mode once a
// PackageInstall left from the serve mode is gone (what it installed stays
// in place for the App to adopt).
func (r *Reconciler) install(ctx context.Context, s *scope.Scope, route Route, modeErr error) scope.Outcome {
	switch {
	case route == InstallInvalid:
		return scope.Outcome{Err: modeErr}
	case !r.kapp.Ready():
		// Waits, without an error: the API's arrival wakes every
		// BundleDeployment.
		return scope.Outcome{Failure: &status.Failure{Kind: status.KappControllerMissing, Message: kappapi.Missing(translate.Namespaces(r.set.Config))}}
	case route == InstallServe:
		return r.serve.Install(ctx, s)
	}
	if gone, err := r.serve.Leave(ctx, s); err != nil || !gone {
		return scope.Outcome{Err: err}
	}
	return r.app.Install(ctx, s)
}

// remove deletes what the BundleDeployment installed: the serve mode's
// PackageInstall first, then the App; gone once the App is.
func (r *Reconciler) remove(ctx context.Context, s *scope.Scope) (bool, scope.Outcome) {
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
func (r *Reconciler) handBack(ctx context.Context, s *scope.Scope) error {
	done, err := r.app.Release(ctx, s)
	if err != nil || !done {
		return err
	}
	return r.finish(ctx, s)
}
