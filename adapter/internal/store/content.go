package store

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// content returns what bd's generation installs, as Secrets in ns the App
// reads: remembered, recovered from the App, or fetched now. Content that
// is not a valid bundle comes back as refused, alongside the deployed content
// when a tracked branch moved to it, so the failure is reported once and
// not fetched again until the source moves. Other errors are retried.
func (s *Store) content(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string) (Fetched, error) {
	f, ok := s.cache.get(bd)
	if !ok {
		f, ok = s.recoverContent(ctx, bd, ns)
	}
	head := ""
	if ok {
		var reuse bool
		if reuse, head = s.reusable(ctx, bd, ns, &f); reuse {
			s.cache.put(bd, f)
			return f, nil
		}
	}
	// A fetch that failed is not made again before its backoff has passed,
	// whatever brings the BundleDeployment back (its status write's echo,
	// an App's event): the failure is reported as it was. ConfigMaps are
	// read from the informer cache, and a change of one wakes what reads
	// it: never held back.
	key, gen := string(bd.UID), strconv.FormatInt(bd.Generation, 10)
	held := bd.Spec.Source.Type != rukpakv1alpha2.SourceTypeConfigMaps
	if held {
		if err := s.retries.Pending(key, gen, time.Now()); err != nil {
			return Fetched{}, err
		}
	}
	fresh, err := s.fetchFresh(ctx, bd, ns)
	switch {
	case err == nil:
		s.retries.Forget(key)
		s.cache.put(bd, fresh)
		return fresh, nil
	case !scope.Permanent(err) && held:
		// Retried when its backoff says; a tracked branch is checked
		// again then.
		return Fetched{}, s.retries.Failed(key, gen, err, true, time.Now())
	case !scope.Permanent(err):
		return Fetched{}, err
	}
	refused := &refusal{commit: head, err: err}
	if fresh.Resolved != nil && fresh.Resolved.Git != nil {
		refused.commit = fresh.Resolved.Git.Ref.Commit
	}
	if !ok || f.Secrets == nil {
		f = fetchedFor(bd)
	}
	f.refused, f.checked = refused, time.Now()
	s.cache.put(bd, f)
	return f, nil
}

// reusable reports whether what was fetched for this generation still
// stands, and the head of a tracked branch it just looked up. ConfigMaps
// come from the informer cache, so reading them again is cheap and sees
// every change; a webhook certificate may be due; a tracked branch may have
// moved; a content Secret may have been deleted by hand.
func (s *Store) reusable(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string, f *Fetched) (bool, string) {
	if bd.Spec.Source.Type == rukpakv1alpha2.SourceTypeConfigMaps || (!f.renewAt.IsZero() && !time.Now().Before(f.renewAt)) {
		return false, ""
	}
	if moved, head := s.branchMoved(ctx, bd, f); moved {
		return false, head
	}
	for _, secret := range f.Secrets {
		err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret.Name}, &corev1.Secret{})
		if err != nil {
			return false, ""
		}
	}
	return true, ""
}

// branchMoved asks the remote, at most once per branch sync period, whether
// a tracked branch has a commit other than the one deployed or refused. An
// unreachable remote keeps what was deployed; the next period tries again.
func (s *Store) branchMoved(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f *Fetched) (bool, string) {
	g := bd.Spec.Source.Git
	if g == nil || g.Ref.Branch == "" || time.Since(f.checked) < s.cfg.BranchSyncPeriod {
		return false, ""
	}
	deployed := ""
	if f.Resolved != nil && f.Resolved.Git != nil {
		deployed = f.Resolved.Git.Ref.Commit
	}
	head, err := s.fetcher.RemoteHead(ctx, g)
	if err != nil {
		log.FromContext(ctx).Info("checking the tracked branch failed; keeping the deployed commit", "error", status.Redact(err.Error()))
		f.checked = time.Now()
		return false, ""
	}
	if head == deployed || (f.refused != nil && head == f.refused.commit) {
		f.checked = time.Now()
		return false, ""
	}
	return true, head
}

// fetchFresh fetches bd's source, lays the bundle out for the App and
// stores it in immutable Secrets in ns named by their content. When the
// content is refused, the returned Fetched still names the source it came
// from.
func (s *Store) fetchFresh(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string) (Fetched, error) {
	var certs convert.CertSource
	var kept *certStore
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		// Only registry+v1 bundles have webhooks, and so certificates.
		var err error
		if kept, err = loadCertStore(ctx, s.client, s.cfg.SystemNamespace, bd, time.Now()); err != nil {
			return Fetched{}, &scope.StepError{Step: scope.StepStore, Err: err}
		}
		certs = kept.source()
	}
	m, err := Materialize(ctx, s.fetcher, bd, certs)
	if !m.Fetched {
		return Fetched{}, err
	}
	f := fetchedFor(bd)
	f.Resolved, f.checked = m.Resolved, time.Now()
	if err != nil {
		return f, err
	}
	f.Bundle = Recorded(m.Layout)
	chunks, err := m.Pack(bd)
	if err != nil {
		return f, err
	}
	if kept != nil {
		// The certificates are stored before any content refers to them.
		if err := kept.save(ctx, s.client); err != nil {
			return Fetched{}, &scope.StepError{Step: scope.StepStore, Err: err}
		}
		f.renewAt = kept.renewAt
	}
	for _, c := range chunks {
		if err := s.PutChunk(ctx, bd, ns, c); err != nil {
			return Fetched{}, &scope.StepError{Step: scope.StepStore, Err: err}
		}
		f.Secrets = append(f.Secrets, translate.ContentSecret{Name: c.Name, Dir: c.Dir})
	}
	return f, nil
}
