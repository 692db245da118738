package drift

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

const (
	ownerKindLabel = rukpakv1alpha2.LabelOwnerKind
	ownerNameLabel = rukpakv1alpha2.LabelOwnerName
)

// installedSelector selects every object kapp installed for a
// BundleDeployment: the watches see nothing else of the cluster.
var installedSelector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: map[string]string{ownerKindLabel: rukpakv1alpha2.OwnerKind}})

// kinds runs one metadata-only watch per kind that some App installed, as
// kapp-controller lists them in each App's status, for as long as one does.
type kinds struct {
	client metadata.Interface
	mapper meta.RESTMapper
	// handler is what each watch reports its kind's events to.
	handler func(schema.GroupKind) toolscache.ResourceEventHandler

	mu sync.Mutex
	// users counts the Apps that installed each kind.
	users map[schema.GroupKind]int
	// running are the watches, each with the function that stops it.
	running map[schema.GroupKind]context.CancelFunc
	// refused are kinds the adapter may not list and watch: their drift is
	// repaired at the sync period only, as before.
	refused map[schema.GroupKind]bool
	// failed are kinds whose watch could not start or ended (not served),
	// tried again at the next App event after retryAfter.
	failed map[schema.GroupKind]time.Time
	ctx    context.Context
}

// WatchedFromStart are the resources whose installed objects are watched
// from the adapter's start, whether or not an App installed one yet: the
// drift repair rules of config/rbac/role.yaml (a test keeps the two the
// same), and the workloads. A kind granted beyond these (a custom
// resource, say) is watched from the first App that reports it installed.
var WatchedFromStart = []schema.GroupResource{
	{Resource: "configmaps"}, {Resource: "services"}, {Resource: "serviceaccounts"}, {Resource: "namespaces"},
	{Resource: "persistentvolumeclaims"},
	{Group: "apps", Resource: "deployments"}, {Group: "apps", Resource: "statefulsets"}, {Group: "apps", Resource: "daemonsets"},
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}, {Group: "rbac.authorization.k8s.io", Resource: "rolebindings"},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, {Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}, {Group: "networking.k8s.io", Resource: "ingresses"},
	{Group: "batch", Resource: "jobs"}, {Group: "batch", Resource: "cronjobs"},
	{Group: "policy", Resource: "poddisruptionbudgets"},
	{Group: "apiregistration.k8s.io", Resource: "apiservices"},
}

// fromStart are the kinds of WatchedFromStart the API server serves.
func fromStart(ctx context.Context, mapper meta.RESTMapper) []schema.GroupKind {
	var out []schema.GroupKind
	for _, gr := range WatchedFromStart {
		gvk, err := mapper.KindFor(gr.WithVersion(""))
		if err != nil {
			log.FromContext(ctx).Info("not watching installed objects of a resource the API server does not serve", "resource", gr.String(), "error", err.Error())
			continue
		}
		out = append(out, gvk.GroupKind())
	}
	return out
}

// retryAfter spaces the attempts to watch a kind the API server does not
// serve (its CRD went away): each costs a discovery request.
const retryAfter = time.Minute

func newKinds(ctx context.Context, c metadata.Interface, mapper meta.RESTMapper, h func(schema.GroupKind) toolscache.ResourceEventHandler) *kinds {
	return &kinds{client: c, mapper: mapper, handler: h, ctx: ctx,
		users: map[schema.GroupKind]int{}, running: map[schema.GroupKind]context.CancelFunc{},
		refused: map[schema.GroupKind]bool{}, failed: map[schema.GroupKind]time.Time{}}
}

// use moves one App's kinds from before to after, starting and stopping
// watches as kinds gain their first App or lose their last.
func (k *kinds) use(before, after []schema.GroupKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, gk := range after {
		k.users[gk]++
		k.start(gk)
	}
	for _, gk := range before {
		if k.users[gk]--; k.users[gk] <= 0 {
			delete(k.users, gk)
			if stop, ok := k.running[gk]; ok {
				stop()
				delete(k.running, gk)
			}
		}
	}
}

// start runs the watch of gk; k.mu is held.
func (k *kinds) start(gk schema.GroupKind) {
	if k.refused[gk] || k.running[gk] != nil || time.Since(k.failed[gk]) < retryAfter {
		return
	}
	logger := log.FromContext(k.ctx).WithValues("kind", gk.String())
	mapping, err := k.mapper.RESTMapping(gk)
	if err != nil {
		// A kind no longer served (its CRD went away) comes back with the
		// next App that lists it.
		logger.Info("not watching installed objects of a kind the API server does not serve", "error", err.Error())
		k.failed[gk] = time.Now()
		return
	}
	ctx, stop := context.WithCancel(k.ctx)
	k.running[gk] = stop
	inf := metadatainformer.NewFilteredMetadataInformer(k.client, mapping.Resource, metav1.NamespaceAll, 0, toolscache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = installedSelector }).Informer()
	_ = inf.SetTransform(func(o any) (any, error) {
		if m, ok := o.(*metav1.PartialObjectMetadata); ok {
			return Strip(m), nil
		}
		return o, nil
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
			return
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if apierrors.IsForbidden(err) {
			k.refused[gk] = true
			logger.Info("not allowed to watch installed objects of this kind: a deleted or changed one is repaired at the App's sync period; "+
				"grant the adapter list and watch on it (config/rbac) and restart it to repair within seconds", "error", err.Error())
		} else {
			k.failed[gk] = time.Now()
		}
		if k.running[gk] != nil {
			stop()
			delete(k.running, gk)
		}
	})
	if _, err := inf.AddEventHandler(k.handler(gk)); err != nil {
		logger.Error(err, "watch installed objects")
		stop()
		delete(k.running, gk)
		return
	}
	go inf.RunWithContext(ctx)
}
