package store

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Fetched is what the adapter fetched for one generation of a
// BundleDeployment. The files themselves live in the content Secrets only;
// this is what the many reconciles an install causes (one per App status
// change) need to skip fetching again.
type Fetched struct {
	generation int64
	// Resolved is the source pinned to what was fetched.
	Resolved *rukpakv1alpha2.BundleSource
	// Secrets name the content Secrets the App reads; nil when nothing
	// usable was fetched for this generation.
	Secrets []translate.ContentSecret
	// Bundle is what a registry+v1 bundle says of itself.
	Bundle *translate.BundleMetadata
	// checked is when a tracked branch was last compared with its remote.
	checked time.Time
	// renewAt is when a webhook certificate in the content is due.
	renewAt time.Time
	// refused is content that is not a valid bundle: this generation's,
	// or a tracked branch's newer commit alongside the deployed one. It is
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

// Packed is what the App reads; nil when nothing usable was fetched.
func (f Fetched) Packed() *translate.Packed {
	if f.Secrets == nil {
		return nil
	}
	return &translate.Packed{Secrets: f.Secrets, Resolved: f.Resolved, Bundle: f.Bundle}
}

// contentCacheSize bounds the remembered fetches. An entry holds names, not
// files (well under a kilobyte), and one that is evicted is recovered from
// the App and its Secrets.
const contentCacheSize = 16384

type contentCache struct{ entries *lru.Cache }

func newContentCache() contentCache { return contentCache{entries: lru.New(contentCacheSize)} }

func (c contentCache) get(bd *rukpakv1alpha2.BundleDeployment) (Fetched, bool) {
	v, ok := c.entries.Get(bd.UID)
	if !ok {
		return Fetched{}, false
	}
	f := v.(Fetched)
	return f, f.generation == bd.Generation
}

// fetchedFor is what is fetched for bd as it is now.
func fetchedFor(bd *rukpakv1alpha2.BundleDeployment) Fetched {
	return Fetched{generation: bd.Generation}
}

func (c contentCache) put(bd *rukpakv1alpha2.BundleDeployment, f Fetched) { c.entries.Add(bd.UID, f) }

func (c contentCache) forget(uid types.UID) { c.entries.Remove(uid) }

// recoverContent rebuilds what was fetched for bd's generation from the App
// the adapter wrote in ns and the content Secrets it reads, so a restarted
// adapter does not fetch every bundle again.
func (s *Store) recoverContent(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string) (Fetched, bool) {
	app := &kappctrlv1alpha1.App{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: bd.Name}, app); err != nil {
		return Fetched{}, false
	}
	resolved := &rukpakv1alpha2.BundleSource{}
	if app.Annotations[rukpakv1alpha2.AnnotationBundleGeneration] != strconv.FormatInt(bd.Generation, 10) ||
		json.Unmarshal([]byte(app.Annotations[rukpakv1alpha2.AnnotationResolvedSource]), resolved) != nil ||
		len(app.Spec.Fetch) != 1 || app.Spec.Fetch[0].Inline == nil {
		return Fetched{}, false
	}
	f := fetchedFor(bd)
	f.Resolved = resolved
	if data, ok := app.Annotations[rukpakv1alpha2.AnnotationBundleMetadata]; ok {
		f.Bundle = &translate.BundleMetadata{}
		if json.Unmarshal([]byte(data), f.Bundle) != nil {
			return Fetched{}, false
		}
	}
	for _, p := range app.Spec.Fetch[0].Inline.PathsFrom {
		if p.SecretRef == nil {
			return Fetched{}, false
		}
		secret := &corev1.Secret{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: p.SecretRef.Name}, secret); err != nil ||
			secret.Labels[LabelContent] != "true" || secret.Labels[rukpakv1alpha2.LabelOwnerName] != bd.Name {
			return Fetched{}, false
		}
		dir := p.SecretRef.DirectoryPath
		if dir == "" {
			dir = "."
		}
		f.Secrets = append(f.Secrets, translate.ContentSecret{Name: p.SecretRef.Name, Dir: dir})
	}
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		at, err := storedRenewAt(ctx, s.client, s.cfg.SystemNamespace, bd)
		if err != nil {
			return Fetched{}, false
		}
		f.renewAt = at
	}
	return f, true
}
