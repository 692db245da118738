package adapter

import (
	"context"
	"encoding/json"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// fetched is what the adapter fetched for one generation of a
// BundleDeployment. The files themselves live in the content Secrets only;
// this is what the many reconciles an install causes (one per App status
// change) need to skip fetching again.
type fetched struct {
	generation int64
	// resolved is the source pinned to what was fetched.
	resolved *rukpakv1alpha2.BundleSource
	// secrets name the content Secrets the App reads; nil when nothing
	// usable was fetched for this generation.
	secrets []translate.ContentSecret
	// checked is when a tracked branch was last compared with its remote.
	checked time.Time
	// renewAt is when a webhook certificate in the content is due.
	renewAt time.Time
	// bundle is what a registry+v1 bundle says of itself.
	bundle *translate.BundleMetadata
	// refused is content that is not a valid bundle: this generation's,
	// or a tracked branch's newer commit beside the deployed one. It is
	// kept so that the failure is reported once and not fetched again
	// until the source moves.
	refused *refusal
}

type refusal struct {
	// commit is the branch head that was refused; empty for a generation's
	// only content.
	commit string
	err    error
}

// content is what the App reads; nil when nothing usable was fetched.
func (f fetched) content() *translate.Content {
	if f.secrets == nil {
		return nil
	}
	return &translate.Content{Secrets: f.secrets, Resolved: f.resolved, Bundle: f.bundle}
}

// contentCacheSize bounds the remembered fetches. An entry holds names, not
// files (well under a kilobyte), and one that is evicted is recovered from
// the App and its Secrets.
const contentCacheSize = 16384

type contentCache struct{ entries *lru.Cache }

func newContentCache() contentCache { return contentCache{entries: lru.New(contentCacheSize)} }

func (c contentCache) get(bd *rukpakv1alpha2.BundleDeployment) (fetched, bool) {
	v, ok := c.entries.Get(bd.UID)
	if !ok {
		return fetched{}, false
	}
	f := v.(fetched)
	return f, f.generation == bd.Generation
}

func (c contentCache) put(bd *rukpakv1alpha2.BundleDeployment, f fetched) { c.entries.Add(bd.UID, f) }

func (c contentCache) forget(uid types.UID) { c.entries.Remove(uid) }

// recoverContent rebuilds what was fetched for bd's generation from the App
// the adapter wrote and the content Secrets it reads, so a restarted
// adapter does not fetch every bundle again.
func (r *Reconciler) recoverContent(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetched, bool) {
	app := &kappctrlv1alpha1.App{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.appNS(bd.Name), Name: bd.Name}, app); err != nil {
		return fetched{}, false
	}
	resolved := &rukpakv1alpha2.BundleSource{}
	if app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] != formatGeneration(bd.Generation) ||
		json.Unmarshal([]byte(app.Annotations[rukpakv1alpha2.AnnotationResolvedSource]), resolved) != nil ||
		len(app.Spec.Fetch) != 1 || app.Spec.Fetch[0].Inline == nil {
		return fetched{}, false
	}
	f := fetched{generation: bd.Generation, resolved: resolved}
	if data, ok := app.Annotations[rukpakv1alpha2.AnnotationBundleMetadata]; ok {
		f.bundle = &translate.BundleMetadata{}
		if json.Unmarshal([]byte(data), f.bundle) != nil {
			return fetched{}, false
		}
	}
	for _, p := range app.Spec.Fetch[0].Inline.PathsFrom {
		if p.SecretRef == nil {
			return fetched{}, false
		}
		secret := &corev1.Secret{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.appNS(bd.Name), Name: p.SecretRef.Name}, secret); err != nil ||
			secret.Labels[LabelContent] != "true" || secret.Labels[rukpakv1alpha2.LabelOwnerName] != bd.Name {
			return fetched{}, false
		}
		dir := p.SecretRef.DirectoryPath
		if dir == "" {
			dir = "."
		}
		f.secrets = append(f.secrets, translate.ContentSecret{Name: p.SecretRef.Name, Dir: dir})
	}
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		at, err := storedRenewAt(ctx, r.client, r.cfg.SystemNamespace, bd)
		if err != nil {
			return fetched{}, false
		}
		f.renewAt = at
	}
	return f, true
}
