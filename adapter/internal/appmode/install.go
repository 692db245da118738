package appmode

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
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
	var retry error
	if kube.DeployedCurrent(facts.App) && gathered.Failure == nil {
		if err := m.store.Prune(ctx, s.AppNS, bd.Name, f.Packed()); err != nil {
			facts.PruneFailure, retry = err.Error(), err
		}
	}
	// The first judgment of what a deploy installed reads the API server:
	// the caches may not have seen what the deploy just wrote, and the
	// Healthy said of a generation is what a walk's next step waits for.
	reader := client.Reader(m.client)
	if kube.FirstJudgment(s.BD, facts.App) {
		reader = m.direct
	}
	if err := kube.ObserveWorkloads(ctx, reader, bd, facts, kube.DeployedCurrent(facts.App)); err != nil {
		retry = err
	}
	return scope.Outcome{Timer: gathered.Timer, Retry: retry, Failure: gathered.Failure}
}
