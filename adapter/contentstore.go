package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// LabelContent marks the Secrets that hold content the adapter fetched.
const LabelContent = "core.rukpak.io/content"

// fetchTimeout bounds one fetch so a hanging registry cannot stall a worker.
const fetchTimeout = 2 * time.Minute

// content returns what bd's generation installs, as Secrets the App reads:
// remembered, recovered from the App, or fetched now. Content that is not a
// valid bundle comes back as refused, beside the deployed content when a
// tracked branch moved to it, so the failure is reported once and not
// fetched again until the source moves. Other errors are retried.
func (r *Reconciler) content(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetched, error) {
	f, ok := r.cache.get(bd)
	if !ok {
		f, ok = r.recoverContent(ctx, bd)
	}
	head := ""
	if ok {
		var reuse bool
		if reuse, head = r.reusable(ctx, bd, &f); reuse {
			r.cache.put(bd, f)
			return f, nil
		}
	}
	fresh, err := r.fetchFresh(ctx, bd)
	switch {
	case err == nil:
		r.cache.put(bd, fresh)
		return fresh, nil
	case !permanent(err):
		// Retried with backoff; a tracked branch is checked again then.
		return fetched{}, err
	}
	refused := &refusal{commit: head, err: err}
	if fresh.resolved != nil && fresh.resolved.Git != nil {
		refused.commit = fresh.resolved.Git.Ref.Commit
	}
	if !ok || f.secrets == nil {
		f = fetched{generation: bd.Generation}
	}
	f.refused, f.checked = refused, time.Now()
	r.cache.put(bd, f)
	return f, nil
}

// permanent says only new content or a new spec ends err.
func permanent(err error) bool { return !failureOf(err).Retrying }

// reusable reports whether what was fetched for this generation still
// stands, and the head of a tracked branch it just looked up. ConfigMaps
// come from the informer cache, so reading them again is cheap and sees
// every change; a webhook certificate may be due; a tracked branch may have
// moved; a content Secret may have been deleted by hand.
func (r *Reconciler) reusable(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f *fetched) (bool, string) {
	if bd.Spec.Source.Type == rukpakv1alpha2.SourceTypeConfigMaps || (!f.renewAt.IsZero() && !time.Now().Before(f.renewAt)) {
		return false, ""
	}
	if moved, head := r.branchMoved(ctx, bd, f); moved {
		return false, head
	}
	for _, s := range f.secrets {
		err := r.client.Get(ctx, client.ObjectKey{Namespace: r.appNS(bd.Name), Name: s.Name}, &corev1.Secret{})
		if err != nil {
			return false, ""
		}
	}
	return true, ""
}

// branchMoved asks the remote, at most once per branch sync period, whether
// a tracked branch has a commit other than the one deployed or refused. An
// unreachable remote keeps what was deployed; the next period tries again.
func (r *Reconciler) branchMoved(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f *fetched) (bool, string) {
	g := bd.Spec.Source.Git
	if g == nil || g.Ref.Branch == "" || time.Since(f.checked) < r.cfg.BranchSyncPeriod {
		return false, ""
	}
	deployed := ""
	if f.resolved != nil && f.resolved.Git != nil {
		deployed = f.resolved.Git.Ref.Commit
	}
	head, err := r.remoteHead(ctx, g)
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

func (r *Reconciler) remoteHead(ctx context.Context, g *rukpakv1alpha2.GitSource) (string, error) {
	opts, err := r.sources().gitOptions(ctx, g)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	return fetch.RemoteHead(cctx, opts)
}

// fetchFresh fetches bd's source, lays the bundle out for the App and
// stores it in immutable Secrets named by their content. When the content
// is refused, the returned fetched still names the source it came from.
func (r *Reconciler) fetchFresh(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetched, error) {
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	var certs convert.CertSource
	var store *certStore
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		// Only registry+v1 bundles have webhooks, and so certificates.
		var err error
		if store, err = loadCertStore(ctx, r.client, r.cfg.SystemNamespace, bd, time.Now()); err != nil {
			return fetched{}, &stepError{step: stepStore, err: err}
		}
		certs = store.source()
	}
	files, resolved, err := r.sources().fetch(fctx, bd)
	if err != nil {
		return fetched{}, err
	}
	f := fetched{generation: bd.Generation, resolved: resolved, checked: time.Now()}
	layout, err := bundle.Lay(bd, files, certs)
	if err != nil {
		return f, err
	}
	f.bundle = recorded(layout)
	chunks, err := content.Pack(bd.Name, layout.Files)
	if err != nil {
		return f, err
	}
	if store != nil {
		// The certificates are stored before any content refers to them.
		if err := store.save(ctx, r.client); err != nil {
			return fetched{}, &stepError{step: stepStore, err: err}
		}
		f.renewAt = store.renewAt
	}
	for _, c := range chunks {
		if err := r.createContentSecret(ctx, bd, c); err != nil {
			return fetched{}, &stepError{step: stepStore, err: err}
		}
		f.secrets = append(f.secrets, translate.ContentSecret{Name: c.Name, Dir: c.Dir})
	}
	return f, nil
}

// createContentSecret creates a content Secret unless it exists. The check
// reads the informer cache, so unchanged content costs no API request.
func (r *Reconciler) createContentSecret(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, c content.Chunk) error {
	err := r.client.Get(ctx, client.ObjectKey{Namespace: r.appNS(bd.Name), Name: c.Name}, &corev1.Secret{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get content secret %s: %w", c.Name, err)
	}
	// The name is the content's hash: one that exists already holds the
	// same files, so AlreadyExists (a racing reconcile) is fine.
	err = r.client.Create(ctx, contentSecret(bd, r.appNS(bd.Name), c), client.FieldOwner(FieldOwner))
	if client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create content secret %s: %w", c.Name, err)
	}
	return nil
}

// contentSecret is the immutable Secret holding one chunk, owned by bd.
func contentSecret(bd *rukpakv1alpha2.BundleDeployment, namespace string, c content.Chunk) *corev1.Secret {
	labels := translate.OwnerLabels(bd.Name)
	labels[LabelContent] = "true"
	immutable := true
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.Name, Namespace: namespace, Labels: labels,
			OwnerReferences: translate.OwnerReferences(bd),
		},
		Immutable: &immutable,
		Data:      c.Data,
	}
}

// pruneContent deletes content Secrets of bd that the App no longer reads.
// It runs only once the App deployed the current content, so kapp-controller
// never loses files it still needs.
func (r *Reconciler) pruneContent(ctx context.Context, bdName string, current *translate.Content) error {
	keep := map[string]bool{}
	if current != nil {
		for _, s := range current.Secrets {
			keep[s.Name] = true
		}
	}
	list := &corev1.SecretList{}
	if err := r.client.List(ctx, list, client.InNamespace(r.appNS(bdName)), client.MatchingLabels{
		rukpakv1alpha2.LabelOwnerName: bdName, LabelContent: "true",
	}); err != nil {
		return fmt.Errorf("list content secrets: %w", err)
	}
	var errs []error
	for i := range list.Items {
		if s := &list.Items[i]; !keep[s.Name] {
			if err := r.client.Delete(ctx, s); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete superseded content secret %s: %w", s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

func (r *Reconciler) sources() sourceFetcher {
	return sourceFetcher{reader: r.client, namespace: r.cfg.SystemNamespace, digests: r.digests}
}

// recorded is what the App records of a registry+v1 bundle's layout; nil
// for other formats.
func recorded(layout *bundle.Layout) *translate.BundleMetadata {
	m := layout.Metadata
	if m == nil {
		return nil
	}
	return &translate.BundleMetadata{Package: m.Package, Labels: m.Labels, Dependencies: m.Dependencies, Notes: layout.Notes}
}
