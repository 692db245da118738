package adapter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// LabelContent marks the Secrets that hold content the adapter fetched.
const LabelContent = "core.rukpak.io/content"

// fetchTimeout bounds one fetch so a hanging registry cannot stall a worker.
const fetchTimeout = 2 * time.Minute

// fetched is what one generation of a BundleDeployment fetched. It is kept
// in memory so that the many reconciles an install causes (one per App
// status change) fetch once.
type fetched struct {
	generation int64
	// resolved is the source pinned to what was fetched.
	resolved *rukpakv1alpha2.BundleSource
	// chunks are kept whole so a content Secret deleted by hand can be
	// recreated without fetching again.
	chunks []content.Chunk
	// checked is when a tracked branch was last compared with its remote.
	checked time.Time
	// renewAt is when a webhook certificate in the content is due.
	renewAt time.Time
}

// refs names the content Secrets for the App; nil when nothing was fetched.
func (f fetched) refs() *translate.Content {
	if f.chunks == nil {
		return nil
	}
	c := &translate.Content{}
	for _, ch := range f.chunks {
		c.Secrets = append(c.Secrets, translate.ContentSecret{Name: ch.Name, Dir: ch.Dir})
	}
	return c
}

type contentCache struct {
	mu      sync.Mutex
	entries map[types.UID]fetched
}

func (c *contentCache) get(bd *rukpakv1alpha2.BundleDeployment) (fetched, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.entries[bd.UID]
	return f, ok && f.generation == bd.Generation
}

func (c *contentCache) put(bd *rukpakv1alpha2.BundleDeployment, f fetched) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[types.UID]fetched{}
	}
	c.entries[bd.UID] = f
}

func (c *contentCache) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, uid)
}

// fetchContent fetches bd's source, keeps what its format installs and
// stores it in immutable Secrets named by their content.
func (r *Reconciler) fetchContent(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetched, error) {
	if f, ok := r.cache.get(bd); ok && r.reusable(ctx, bd, f) {
		return f, r.ensureContentSecrets(ctx, bd, f.chunks)
	}
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	if bd.Spec.ProvisionerClassName != rukpakv1alpha2.ClassRegistry {
		f, err := r.sources().fetchBundle(fctx, bd, nil)
		if err != nil {
			return fetched{}, err
		}
		return f, r.storeContent(ctx, bd, f)
	}
	// Only registry+v1 bundles have webhooks, and so certificates.
	store, err := loadCertStore(ctx, r.client, r.cfg.SystemNamespace, bd, time.Now())
	if err != nil {
		return fetched{}, err
	}
	f, err := r.sources().fetchBundle(fctx, bd, store.source())
	if err != nil {
		return fetched{}, err
	}
	// The certificates are stored before any content refers to them.
	if err := store.save(ctx, r.client); err != nil {
		return fetched{}, err
	}
	f.renewAt = store.renewAt
	return f, r.storeContent(ctx, bd, f)
}

// reusable reports whether what was fetched for this generation still
// stands. ConfigMaps come from the informer cache, so reading them again is
// cheap and sees every change; a tracked branch may have moved; a webhook
// certificate may be due.
func (r *Reconciler) reusable(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f fetched) bool {
	return bd.Spec.Source.Type != rukpakv1alpha2.SourceTypeConfigMaps &&
		(f.renewAt.IsZero() || time.Now().Before(f.renewAt)) &&
		!r.branchMoved(ctx, bd, f)
}

// storeContent creates the content Secrets and remembers the fetch.
func (r *Reconciler) storeContent(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f fetched) error {
	if err := r.ensureContentSecrets(ctx, bd, f.chunks); err != nil {
		return err
	}
	r.cache.put(bd, f)
	return nil
}

// branchMoved asks the remote, at most once per branch sync period, whether
// a tracked branch has a commit other than the one fetched. An unreachable
// remote keeps what was deployed; the next check tries again.
func (r *Reconciler) branchMoved(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f fetched) bool {
	g := bd.Spec.Source.Git
	if g == nil || g.Ref.Branch == "" || f.resolved == nil || f.resolved.Git == nil || time.Since(f.checked) < r.cfg.BranchSyncPeriod {
		return false
	}
	f.checked = time.Now()
	r.cache.put(bd, f)
	opts, err := r.sources().gitOptions(ctx, g)
	if err != nil {
		log.FromContext(ctx).Info("checking the tracked branch failed; keeping the deployed commit", "error", err.Error())
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	head, err := fetch.RemoteHead(cctx, opts)
	if err != nil {
		log.FromContext(ctx).Info("checking the tracked branch failed; keeping the deployed commit", "error", err.Error())
		return false
	}
	return head != f.resolved.Git.Ref.Commit
}

// ensureContentSecrets creates the content Secrets that are missing. The
// check reads the informer cache, so an unchanged BundleDeployment costs no
// API request.
func (r *Reconciler) ensureContentSecrets(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, chunks []content.Chunk) error {
	for _, c := range chunks {
		err := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SystemNamespace, Name: c.Name}, &corev1.Secret{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get content secret %s: %w", c.Name, err)
		}
		// The name is the content's hash: one that exists already holds
		// the same files, so AlreadyExists (a racing reconcile) is fine.
		err = r.client.Create(ctx, contentSecret(bd, r.cfg.SystemNamespace, c), client.FieldOwner(FieldOwner))
		if client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("create content secret %s: %w", c.Name, err)
		}
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
func (r *Reconciler) pruneContent(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, current *translate.Content) error {
	keep := map[string]bool{}
	if current != nil {
		for _, s := range current.Secrets {
			keep[s.Name] = true
		}
	}
	list := &corev1.SecretList{}
	if err := r.client.List(ctx, list, client.InNamespace(r.cfg.SystemNamespace), client.MatchingLabels{
		rukpakv1alpha2.LabelOwnerName: bd.Name, LabelContent: "true",
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
