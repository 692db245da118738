package appmode

import (
	"context"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// Install brings the BundleDeployment's App up to date and gathers the
// facts of the status. The order is load-bearing: the copies of what the
// App references are made before the App is applied, and superseded
// content goes only once the App deployed the current content.
func (m *AppInstaller) Install(ctx context.Context, s *scope.Scope) scope.Outcome {
	bd, facts, live := s.View, s.Facts, s.Live
	if handled, o := m.takeOver(ctx, s); handled {
		return o
	}
	f, gathered, stop := m.store.Gather(ctx, s)
	if stop {
		return gathered
	}
	// Apps made before as-bundled Apps existed keep label scoping: changing
	// an installed workload's selector fails, and its pod template rolls.
	desired, err := translate.AppInStyle(bd, s.Cfg, f.Packed(), translate.StyleOf(live))
	if err != nil {
		return scope.Outcome{Err: err}
	}
	if err := kube.Mirror(ctx, m.client, s.Cfg.SystemNamespace, s.AppNS, bd); err != nil {
		return scope.Outcome{Err: &scope.StepError{Step: scope.StepStore, Err: err}}
	}
	if facts.App, err = kube.ApplyApp(ctx, m.client, desired, live); err != nil {
		return scope.Outcome{Err: err}
	}
	m.recordStep(s, live)
	var retry error
	if kube.DeployedCurrent(facts.App) && gathered.Failure == nil {
		if err := m.store.Prune(ctx, s.AppNS, bd.Name, f.Packed()); err != nil {
			facts.PruneFailure, retry = err.Error(), err
		}
	}
	if err := kube.ObserveWorkloads(ctx, m.client, bd, facts, kube.DeployedCurrent(facts.App)); err != nil {
		retry = err
	}
	return scope.Outcome{Timer: gathered.Timer, Retry: retry, Failure: gathered.Failure}
}

// recordStep records the start of a walk's step: the App written now
// installs another catalog bundle than the one read. The Event regards the
// BundleDeployment without its resourceVersion and relates to the step's
// Package, so the same step recorded again (a look that read the App
// before the cache saw this write) adds to that step's Event series
// instead of making another, and each step has its own Event.
func (m *AppInstaller) recordStep(s *scope.Scope, live *kappctrlv1alpha1.App) {
	w := s.Facts.Walk
	if w == nil || m.recorder == nil || (live != nil && live.Annotations[catalog.AnnotationBundle] == s.View.Annotations[catalog.AnnotationBundle]) {
		return
	}
	regarding := s.BD.DeepCopy()
	regarding.ResourceVersion = ""
	ns, name, _ := strings.Cut(w.Package, "/")
	related := &datav1alpha1.Package{TypeMeta: metav1.TypeMeta{APIVersion: datav1alpha1.SchemeGroupVersion.String(), Kind: "Package"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.recorder.Eventf(regarding, related, corev1.EventTypeNormal, status.ReasonUpgradeStep, "Upgrade", "%s", w.StepNote())
}
