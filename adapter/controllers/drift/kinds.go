package drift

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
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
	// failing are the running watches whose last list or watch failed
	// (forbidden, not served, the API server away): each is retried with
	// the informer's backoff, for as long as it runs, and leaves this set
	// when a list or watch succeeds again. A watch never gives up on its
	// own: a restarted API server forbids everything for a moment, before
	// its authorizer caught up.
	failing map[schema.GroupKind]bool
	// failed are kinds the API server did not map (not served), tried
	// again at the next App event after retryAfter.
	failed map[schema.GroupKind]time.Time
	ctx    context.Context
}

// fromStart are the resources whose installed objects are watched from the
// adapter's start, whether or not an App installed one yet, with their
// kinds: the drift repair rules of config/rbac/role.yaml (a test keeps the
// two the same), and the workloads. Their versions are the API's stable
// ones, so these watches need no discovery, which can fail for a while on a
// busy API server. A kind granted beyond these (a custom resource, say) is
// watched from the first App that reports it installed.
var fromStart = map[schema.GroupKind]schema.GroupVersionResource{
	{Kind: "ConfigMap"}:                                               {Version: "v1", Resource: "configmaps"},
	{Kind: "Service"}:                                                 {Version: "v1", Resource: "services"},
	{Kind: "ServiceAccount"}:                                          {Version: "v1", Resource: "serviceaccounts"},
	{Kind: "Namespace"}:                                               {Version: "v1", Resource: "namespaces"},
	{Kind: "PersistentVolumeClaim"}:                                   {Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "apps", Kind: "Deployment"}:                               {Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Kind: "StatefulSet"}:                              {Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Kind: "DaemonSet"}:                                {Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:         {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:         {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:  {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: {
		Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}: {
		Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:   {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	{Group: "networking.k8s.io", Kind: "Ingress"}:         {Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
	{Group: "batch", Kind: "Job"}:                         {Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Kind: "CronJob"}:                     {Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "policy", Kind: "PodDisruptionBudget"}:        {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"}: {Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"},
}

// startKinds are the kinds of fromStart.
func startKinds() []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(fromStart))
	for gk := range fromStart {
		out = append(out, gk)
	}
	return out
}

// retryAfter spaces the attempts to watch a kind the API server does not
// serve (its CRD went away): each costs a discovery request.
const retryAfter = time.Minute

func newKinds(ctx context.Context, c metadata.Interface, mapper meta.RESTMapper, h func(schema.GroupKind) toolscache.ResourceEventHandler) *kinds {
	return &kinds{client: c, mapper: mapper, handler: h, ctx: ctx,
		users: map[schema.GroupKind]int{}, running: map[schema.GroupKind]context.CancelFunc{},
		failing: map[schema.GroupKind]bool{}, failed: map[schema.GroupKind]time.Time{}}
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
				delete(k.failing, gk)
				unwatched.DeleteLabelValues(gk.String())
			}
		}
	}
}

// start runs the watch of gk; k.mu is held.
func (k *kinds) start(gk schema.GroupKind) {
	if k.running[gk] != nil || time.Since(k.failed[gk]) < retryAfter {
		return
	}
	logger := log.FromContext(k.ctx).WithValues("kind", gk.String())
	resource, ok := fromStart[gk]
	if !ok {
		mapping, err := k.mapper.RESTMapping(gk)
		if err != nil {
			// A kind no longer served (its CRD went away) comes back with the
			// next App that lists it.
			logger.Info("not watching installed objects of a kind the API server does not serve", "error", err.Error())
			k.failed[gk] = time.Now()
			return
		}
		resource = mapping.Resource
	}
	ctx, stop := context.WithCancel(k.ctx)
	k.running[gk] = stop
	inf := toolscache.NewSharedIndexInformer(k.listWatch(gk, resource), &metav1.PartialObjectMetadata{}, 0, toolscache.Indexers{})
	_ = inf.SetTransform(func(o any) (any, error) {
		if m, ok := o.(*metav1.PartialObjectMetadata); ok {
			return Strip(m), nil
		}
		return o, nil
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if k.watchFailed(gk, err) {
			logger.Info(failingMessage(err), "error", err.Error())
		}
		if !apierrors.IsForbidden(err) {
			// A forbidden kind (Secrets, by design) is logged once, above.
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
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

// listWatch lists and watches the installed objects of resource, and
// marks gk's watch working again at each list or watch that succeeds.
func (k *kinds) listWatch(gk schema.GroupKind, resource schema.GroupVersionResource) toolscache.ListerWatcher {
	objects := k.client.Resource(resource).Namespace(metav1.NamespaceAll)
	return toolscache.ToListWatcherWithWatchListSemantics(&toolscache.ListWatch{
		ListWithContextFunc: installedOnly(k, gk, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return objects.List(ctx, o)
		}),
		WatchFuncWithContext: installedOnly(k, gk, objects.Watch),
	}, k.client)
}

// installedOnly is call restricted to what kapp installed for a
// BundleDeployment, marking gk's watch working when it succeeds.
func installedOnly[T any](k *kinds, gk schema.GroupKind, call func(context.Context, metav1.ListOptions) (T, error)) func(context.Context, metav1.ListOptions) (T, error) {
	return func(ctx context.Context, o metav1.ListOptions) (T, error) {
		o.LabelSelector = installedSelector
		v, err := call(ctx, o)
		if err == nil {
			k.watchWorks(gk)
		}
		return v, err
	}
}

// watchFailed records that gk's watch failed; true when it worked until
// now, so that each spell of failures is logged once. A watch that ends
// as watches do (closed, too old a resourceVersion) has not failed.
func (k *kinds) watchFailed(gk schema.GroupKind, err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.running[gk] == nil || k.failing[gk] {
		return false
	}
	k.failing[gk] = true
	unwatched.WithLabelValues(gk.String()).Set(1)
	return true
}

func (k *kinds) watchWorks(gk schema.GroupKind) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.failing[gk] {
		return
	}
	delete(k.failing, gk)
	unwatched.DeleteLabelValues(gk.String())
	log.FromContext(k.ctx).Info("watching installed objects again", "kind", gk.String())
}

// failingMessage says what a failed watch means for drift repair, and
// for a forbidden one what to grant.
func failingMessage(err error) string {
	const meanwhile = "watch of installed objects failing, retried with backoff; meanwhile a deleted or changed one is repaired at the App's sync period"
	if apierrors.IsForbidden(err) {
		return meanwhile + "; if this lasts, grant the adapter list and watch on this kind (config/rbac)"
	}
	return meanwhile
}
