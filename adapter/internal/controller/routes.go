package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
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
		s.Facts.Failure = &status.Failure{Kind: status.KappControllerMissing, Message: MissingKappAPI(translate.Namespaces(r.set.Config))}
		return scope.Outcome{}
	}
	if err := r.readApp(ctx, s); err != nil {
		return scope.Outcome{Err: scope.InStep(scope.StepStore, "%w", err)}
	}
	if route == InstallServe {
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
	err := r.readApp(ctx, s)
	s.Facts = &status.Facts{BD: s.BD, App: s.Live, Now: s.Now}
	if err != nil {
		return false, scope.Outcome{Err: err}
	}
	if !r.kapp.Ready() {
		// No PackageInstall can exist.
	} else if waits, err := r.serve.Finalize(ctx, s); waits || err != nil {
		return false, scope.Outcome{Err: err}
	}
	gone, err := r.app.Finalize(ctx, s)
	if err == nil && gone {
		err = r.letGo(ctx, s)
	}
	return gone && err == nil, scope.Outcome{Err: err}
}

// handBack releases a BundleDeployment whose class is no longer claimed.
func (r *Reconciler) handBack(ctx context.Context, s *scope.Scope) error {
	if err := r.readApp(ctx, s); err != nil {
		return err
	}
	done, err := r.app.Release(ctx, s)
	if err != nil || !done {
		return err
	}
	return r.letGo(ctx, s)
}

// readApp reads the scope's App; without kapp-controller's API no App can
// exist.
func (r *Reconciler) readApp(ctx context.Context, s *scope.Scope) (err error) {
	if !r.kapp.Ready() {
		s.Live = nil
		return nil
	}
	s.Live, err = kube.LiveApp(ctx, r.client, r.direct, client.ObjectKey{Namespace: s.AppNS, Name: s.BD.Name})
	return err
}
