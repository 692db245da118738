package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// HealthRoleLabel labels the ClusterRoles aggregated into the adapter's
// role for reading installed custom resources (config/rbac): a kind the
// adapter may not list is Unknown until one grants it.
const HealthRoleLabel = "rukpak-kapp.dev/aggregate-to-health"

// CustomObjects reads the installed custom resources of the kinds each
// App reports installing, for Healthy: one informer per kind, started by
// the first App that reports it, restricted to what kapp installed for a
// BundleDeployment (InstalledSelector) and keeping only the objects'
// metadata and status, in a cache of its own (Cache, which runs with the
// manager). A change of an object's status wakes the BundleDeployment that
// installed it. It is a source of the BundleDeployment controller (Start),
// which gives it the queue.
type CustomObjects struct {
	cache  cache.Cache
	mapper meta.RESTMapper

	mu    sync.Mutex
	ctx   context.Context
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	// watched are the kinds whose informer reports to the queue.
	watched map[schema.GroupKind]bool
	// waiting are, per kind not listed yet, the BundleDeployments that
	// found it so: woken when it is (an empty list has no events).
	waiting map[schema.GroupKind]map[string]bool
	// forbidden are the kinds (as their informers describe them) whose
	// last list the API server refused, until a list succeeds.
	forbidden sync.Map
	// described are the kinds by their informers' description.
	described map[string]schema.GroupKind
	// readBy are the kinds each BundleDeployment's objects were last read
	// of, with their versions: a kind no install reads any more has its
	// informer stopped.
	readBy map[string]map[schema.GroupKind]schema.GroupVersionKind
}

// NewCustomObjects makes the cache of installed custom resources from o
// (its client, scheme and mapper) and reads through it.
func NewCustomObjects(cfg *rest.Config, o cache.Options) (*CustomObjects, error) {
	c := &CustomObjects{mapper: o.Mapper, watched: map[schema.GroupKind]bool{}, waiting: map[schema.GroupKind]map[string]bool{},
		described: map[string]schema.GroupKind{}, readBy: map[string]map[schema.GroupKind]schema.GroupVersionKind{}}
	o.DefaultLabelSelector = InstalledSelector
	o.DefaultTransform = stripToStatus
	o.ReaderFailOnMissingInformer = true
	o.DefaultWatchErrorHandler = c.watchFailed
	var err error
	if c.cache, err = cache.New(cfg, o); err != nil {
		return nil, fmt.Errorf("make the cache of installed custom resources: %w", err)
	}
	return c, nil
}

// Cache is the cache the objects are read from, for the manager to run.
func (c *CustomObjects) Cache() cache.Cache { return c.cache }

// watchFailed records a kind the adapter may not list, which Healthy's
// message names with the grant to add, instead of an error log at every
// retry; the informer retries it with backoff all the same.
func (c *CustomObjects) watchFailed(ctx context.Context, r *toolscache.Reflector, err error) {
	if apierrors.IsForbidden(err) {
		if _, known := c.forbidden.LoadOrStore(r.TypeDescription(), true); !known {
			// The installs waiting for the kind's first list say why now.
			c.mu.Lock()
			c.wakeWaiting(c.described[r.TypeDescription()])
			c.mu.Unlock()
		}
		log.FromContext(ctx).V(1).Info("installed custom resources not listed: the adapter may not list them", "error", err.Error())
		return
	}
	toolscache.DefaultWatchErrorHandler(ctx, r, err)
}

// stripToStatus keeps what kstatus and the owner mapping read.
func stripToStatus(o any) (any, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return o, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	out.SetGeneration(u.GetGeneration())
	out.SetLabels(u.GetLabels())
	out.SetDeletionTimestamp(u.GetDeletionTimestamp())
	if st, ok := u.Object["status"]; ok {
		out.Object["status"] = st
	}
	return out, nil
}

// Start is the controller's: events go to queue from then on.
func (c *CustomObjects) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx, c.queue = ctx, queue
	return nil
}

func (c *CustomObjects) String() string { return "installed custom resources" }

// customKinds are the custom resource kinds app reports installing.
func customKinds(app *kappctrlv1alpha1.App) []schema.GroupKind {
	if app == nil || app.Status.Deploy == nil || app.Status.Deploy.KappDeployStatus == nil {
		return nil
	}
	var out []schema.GroupKind
	for _, gk := range app.Status.Deploy.KappDeployStatus.AssociatedResources.GroupKinds {
		k := schema.GroupKind{Group: gk.Group, Kind: gk.Kind}
		if status.IsCustom(k) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Observe adds to installed the custom resources bdName installed, of the
// kinds app reports; a kind not served or not listed yet is Unread, with
// what to do.
func (c *CustomObjects) Observe(ctx context.Context, app *kappctrlv1alpha1.App, bdName string, installed *status.Installed) error {
	if c == nil {
		return nil
	}
	read := map[schema.GroupKind]schema.GroupVersionKind{}
	for _, mapping := range c.toRead(app, installed) {
		gk := mapping.GroupVersionKind.GroupKind()
		read[gk] = mapping.GroupVersionKind
		synced, err := c.informer(ctx, gk, mapping.GroupVersionKind, bdName)
		if err != nil {
			// What was read before stays watched: a failed look stops nothing.
			return fmt.Errorf("watch installed %s: %w", gk, err)
		}
		if !synced {
			why := "the adapter has not listed them yet; if this lasts, it may not: " + grant(mapping)
			if _, forbidden := c.forbidden.Load(mapping.GroupVersionKind.String()); forbidden {
				why = mayNotList(mapping)
			}
			installed.Unread = append(installed.Unread, status.Unread{Kind: gk, Why: why})
			continue
		}
		list := listOf(mapping)
		if err := c.cache.List(ctx, list, ownedBy(bdName)); err != nil {
			return fmt.Errorf("list installed %s: %w", gk, err)
		}
		installed.Objects = append(installed.Objects, list.Items...)
	}
	c.read(ctx, bdName, read)
	return nil
}

// ObserveLive is Observe read from the API server through live, past the
// cache: what a decision that must not miss an object just created reads
// (a walk's gate, right after kapp deployed its step). It starts no
// informer.
func (c *CustomObjects) ObserveLive(ctx context.Context, live client.Reader, app *kappctrlv1alpha1.App, bdName string, installed *status.Installed) error {
	if c == nil {
		return nil
	}
	for _, mapping := range c.toRead(app, installed) {
		gk := mapping.GroupVersionKind.GroupKind()
		list := listOf(mapping)
		err := live.List(ctx, list, ownedBy(bdName))
		switch {
		case apierrors.IsForbidden(err):
			installed.Unread = append(installed.Unread, status.Unread{Kind: gk, Why: mayNotList(mapping)})
			continue
		case err != nil:
			return fmt.Errorf("list installed %s: %w", gk, err)
		}
		for i := range list.Items {
			// As the cache keeps them: an expression sees the same object
			// whichever way it was read.
			o, _ := stripToStatus(&list.Items[i])
			installed.Objects = append(installed.Objects, *o.(*unstructured.Unstructured))
		}
	}
	return nil
}

// toRead are the mappings of the custom kinds app reports installing whose
// objects are judged; a kind the API server does not serve is Unread.
func (c *CustomObjects) toRead(app *kappctrlv1alpha1.App, installed *status.Installed) []*meta.RESTMapping {
	var out []*meta.RESTMapping
	for _, gk := range customKinds(app) {
		if installed.Rules.Unjudged(gk) {
			// Current whatever its objects say: nothing to read.
			continue
		}
		mapping, err := c.mapper.RESTMapping(gk)
		if err != nil {
			installed.Unread = append(installed.Unread, status.Unread{Kind: gk,
				Why: "its API is not served (its CustomResourceDefinition is gone?), so its objects cannot be read"})
			continue
		}
		out = append(out, mapping)
	}
	return out
}

// mayNotList is why the objects of mapping's kind were not read when the
// adapter is refused their list.
func mayNotList(mapping *meta.RESTMapping) string {
	return "the adapter may not list them: " + grant(mapping)
}

// grant says what grants the adapter the list of mapping's kind.
func grant(mapping *meta.RESTMapping) string {
	return fmt.Sprintf("grant it list and watch on %s in a ClusterRole labelled %s=true", mapping.Resource.GroupResource(), HealthRoleLabel)
}

// listOf is an empty list of mapping's kind.
func listOf(mapping *meta.RESTMapping) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(mapping.GroupVersionKind.Kind + "List"))
	return list
}

// read records the kinds bdName's objects were read of, and stops the
// informers of the kinds no install reads any more.
func (c *CustomObjects) read(ctx context.Context, bdName string, kinds map[schema.GroupKind]schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	before := c.readBy[bdName]
	if len(kinds) == 0 {
		delete(c.readBy, bdName)
	} else {
		c.readBy[bdName] = kinds
	}
	for gk, gvk := range before {
		if _, still := kinds[gk]; still || c.readByAny(gk) {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.cache.RemoveInformer(ctx, u); err != nil {
			log.FromContext(ctx).Info("could not stop the informer of installed custom resources no install reads any more", "kind", gk.String(), "error", err.Error())
			continue
		}
		delete(c.watched, gk)
		delete(c.waiting, gk)
		for d, k := range c.described {
			if k == gk {
				delete(c.described, d)
				c.forbidden.Delete(d)
			}
		}
	}
}

// readByAny says whether an install reads gk's objects; c.mu is held.
func (c *CustomObjects) readByAny(gk schema.GroupKind) bool {
	for _, kinds := range c.readBy {
		if _, ok := kinds[gk]; ok {
			return true
		}
	}
	return false
}

// Forget stops reading, for the BundleDeployment name, what only it read.
func (c *CustomObjects) Forget(name string, _ types.UID) {
	if c == nil {
		return
	}
	c.read(context.Background(), name, nil)
}

// informer starts gk's informer (once, reporting to the queue) and says
// whether it has listed its objects; bdName is woken when it has.
func (c *CustomObjects) informer(ctx context.Context, gk schema.GroupKind, gvk schema.GroupVersionKind, bdName string) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	inf, err := c.cache.GetInformer(ctx, u, cache.BlockUntilSynced(false))
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.described[gvk.String()] = gk
	if !c.watched[gk] && c.queue != nil {
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: c.enqueue,
			UpdateFunc: func(old, obj any) {
				if statusChanged(old, obj) {
					c.enqueue(obj)
				}
			},
			DeleteFunc: c.enqueue,
		}); err != nil {
			return false, err
		}
		c.watched[gk] = true
		go c.wakeWhenListed(gk, inf)
	}
	if inf.HasSynced() {
		return true, nil
	}
	if c.waiting[gk] == nil {
		c.waiting[gk] = map[string]bool{}
	}
	c.waiting[gk][bdName] = true
	return false, nil
}

// wakeWhenListed wakes the BundleDeployments waiting for gk's first list.
func (c *CustomObjects) wakeWhenListed(gk schema.GroupKind, inf cache.Informer) {
	if !toolscache.WaitForCacheSync(c.ctx.Done(), inf.HasSynced) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for d, k := range c.described {
		if k == gk {
			c.forbidden.Delete(d)
		}
	}
	c.wakeWaiting(gk)
	delete(c.waiting, gk)
}

// wakeWaiting wakes the BundleDeployments waiting for gk's first list;
// c.mu is held.
func (c *CustomObjects) wakeWaiting(gk schema.GroupKind) {
	if c.queue == nil {
		return
	}
	for name := range c.waiting[gk] {
		c.queue.Add(reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
	}
}

// enqueue wakes the BundleDeployment that installed o.
func (c *CustomObjects) enqueue(o any) {
	if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	obj, ok := o.(client.Object)
	if !ok {
		return
	}
	c.mu.Lock()
	q := c.queue
	c.mu.Unlock()
	for _, req := range ownerOf(obj) {
		q.Add(req)
	}
}

// statusChanged says whether an update changed what kstatus reads.
func statusChanged(old, obj any) bool {
	a, ok1 := old.(*unstructured.Unstructured)
	b, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return true
	}
	return a.GetGeneration() != b.GetGeneration() || !equality.Semantic.DeepEqual(a.GetDeletionTimestamp(), b.GetDeletionTimestamp()) ||
		!equality.Semantic.DeepEqual(a.Object["status"], b.Object["status"]) || !maps.Equal(a.GetLabels(), b.GetLabels())
}

// ownerOf is the BundleDeployment whose owner labels o carries.
func ownerOf(o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if l[rukpakv1alpha2.LabelOwnerKind] != rukpakv1alpha2.OwnerKind || l[rukpakv1alpha2.LabelOwnerName] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: l[rukpakv1alpha2.LabelOwnerName]}}}
}
