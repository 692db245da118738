package store

import (
	"context"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Gather fetches what the adapter fetches itself for the scope's
// BundleDeployment (nothing for content kapp-controller fetches) and
// gathers its facts. o carries the content's timer (when it needs looking
// at again without any event: a tracked branch, a certificate due), the
// error, and a failure that is no error (content refused, dependencies
// unmet); stop says there is nothing to install now: a refusal, unmet
// dependencies or an error.
func (s *Store) Gather(ctx context.Context, sc *scope.Scope) (f Fetched, o scope.Outcome, stop bool) {
	bd, facts := sc.View, sc.Facts
	if !bundlefiles.AdapterFetches(bd) {
		return f, o, false
	}
	var err error
	if f, err = s.content(ctx, bd, sc.AppNS); err != nil {
		return f, scope.Outcome{Err: err}, true
	}
	o.Timer = timerFor(bd, f, s.cfg.BranchSyncPeriod)
	if f.refused != nil {
		o.Failure = scope.FailureOf(f.refused.err)
	}
	if f.Secrets == nil {
		// Nothing to install: the refusal is the news.
		return f, o, true
	}
	facts.Fetched = f.Resolved
	if f.Bundle != nil {
		facts.Notes = f.Bundle.Notes
	}
	if wait, err := s.deps.check(ctx, bd, f); err != nil || wait != nil {
		o.Failure, o.Err = wait, err
		return f, o, true
	}
	return f, o, false
}

// timerFor is when a BD needs looking at without any event: a tracked branch
// may have moved, or a webhook certificate is due for renewal. Zero: never.
func timerFor(bd *rukpakv1alpha2.BundleDeployment, f Fetched, branchPeriod time.Duration) time.Duration {
	var after time.Duration
	if (f.Secrets != nil || f.refused != nil) && translate.TracksBranch(bd) {
		after = branchPeriod
	}
	if !f.renewAt.IsZero() {
		after = scope.Earliest(after, time.Until(f.renewAt)+time.Minute)
	}
	return after
}
