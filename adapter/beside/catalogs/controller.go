package catalogs

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/fieldowner"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// LabelCatalog names the OperatorCatalog that published a Package or
// PackageMetadata.
const LabelCatalog = "catalog.rukpak-kapp.dev/catalog"

// Finalizer withdraws what an OperatorCatalog published before it goes.
const Finalizer = "catalogs.rukpak-kapp.dev/unpublish"

// Poll intervals: the default, and the shortest allowed (each poll is one
// request to the registry).
const (
	DefaultPoll = 10 * time.Minute
	MinPoll     = 10 * time.Second
)

// maxRefused bounds the refusals kept in the status.
const maxRefused = 20

// Images resolves and pulls catalog images.
type Images interface {
	// Resolve returns ref pinned by digest.
	Resolve(ctx context.Context, ref string) (string, error)
	// Pull reads the catalog of an image pinned by digest.
	Pull(ctx context.Context, pinned string) (*declcfg.DeclarativeConfig, error)
}

// Registry reaches images as the adapter reaches bundle images: through
// kapp-controller-config's CAs and proxies (Network; nil: the
// environment's).
type Registry struct{ Network *fetch.NetworkHolder }

func (r Registry) Resolve(ctx context.Context, ref string) (string, error) {
	return fetch.ResolveImage(ctx, ref, fetch.ImageOptions{Network: r.Network.Load()})
}

func (r Registry) Pull(ctx context.Context, pinned string) (*declcfg.DeclarativeConfig, error) {
	cfg, _, err := fetch.CatalogImage(ctx, pinned, fetch.ImageOptions{Network: r.Network.Load()}, fetch.InClusterCatalogLimits)
	return cfg, err
}

// StatusWriter stores obj's status as changed from before, locked by the
// resourceVersion read (a stale read gets a conflict), and records the
// transition of its conditions (was to now) as an Event: the adapter's one
// status write (kube.ConditionsWriter), which the facade gives.
type StatusWriter func(ctx context.Context, obj, before client.Object, was, now []metav1.Condition) error

// Reconciler publishes OperatorCatalogs.
type Reconciler struct {
	client client.Client
	direct client.Reader
	images Images
	status StatusWriter
	// retries holds back the registry requests of a catalog that failed
	// until their backoff has passed.
	retries fetch.Backoff
}

// New is the controller's reconciler: c reads OperatorCatalogs (cached)
// and writes them and the packages; direct reads the packages (in any
// namespace, so never through the adapter's cache); images reaches the
// catalog images; status writes its status.
func New(c client.Client, direct client.Reader, images Images, status StatusWriter) *Reconciler {
	return &Reconciler{client: c, direct: direct, images: images, status: status}
}

// SetupWithManager registers the controller (leader only).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("operatorcatalogs").For(&catalogsv1alpha1.OperatorCatalog{}).
		// What fails other than the registry (a write) backs off as every
		// other retry of the adapter, not from controller-runtime's 5 ms.
		WithOptions(controller.Options{MaxConcurrentReconciles: workers,
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](fetch.RetryBase, fetch.RetryMax)}).
		Complete(r)
}

// Poll is how often cat's image is looked up.
func Poll(cat *catalogsv1alpha1.OperatorCatalog) time.Duration {
	if cat.Spec.PollInterval == nil {
		return DefaultPoll
	}
	return max(cat.Spec.PollInterval.Duration, MinPoll)
}

func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.publish(ctx, req)
	if apierrors.IsConflict(err) {
		// As the dispatcher does: a status read stale is not written over;
		// another look with backoff writes it afresh (a failed registry
		// request is remembered for it, not made again), and nothing is
		// logged as an error.
		return reconcile.Result{Requeue: true}, nil
	}
	return res, err
}

// publish reads the catalog, looks its image up and publishes what is new,
// then writes its status.
func (r *Reconciler) publish(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := req.String()
	cat := &catalogsv1alpha1.OperatorCatalog{}
	if err := r.client.Get(ctx, req.NamespacedName, cat); err != nil {
		if apierrors.IsNotFound(err) {
			r.retries.Forget(key)
			r.retries.Forget(key + invalidKey)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cat.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.unpublish(ctx, cat)
	}
	if !controllerutil.ContainsFinalizer(cat, Finalizer) {
		patch := client.MergeFrom(cat.DeepCopy())
		controllerutil.AddFinalizer(cat, Finalizer)
		if err := r.client.Patch(ctx, cat, patch, client.FieldOwner(fieldowner.Name)); err != nil {
			return reconcile.Result{}, fmt.Errorf("add the finalizer to OperatorCatalog %s: %w", req, err)
		}
	}
	poll := Poll(cat)
	// A registry that failed is not asked again before its backoff has
	// passed, whatever queued the catalog (its own status write's echo):
	// the status already says the failure and its next attempt.
	input := fmt.Sprintf("%s/%d", cat.UID, cat.Generation)
	if err := r.retries.Pending(key, input, time.Now()); err != nil {
		return reconcile.Result{RequeueAfter: max(time.Until(fetch.NextAttempt(err)), time.Millisecond)}, nil
	}
	pinned, err := r.resolve(ctx, cat.Spec.Image)
	if err != nil {
		return r.retry(ctx, cat, key, input, err, func(next string) string {
			return fmt.Sprintf("The catalog image %s could not be looked up: %v. It is looked up again at %s.", cat.Spec.Image, err, next)
		})
	}
	if pinned == cat.Status.ResolvedImage && cat.Status.ObservedGeneration == cat.Generation &&
		meta.IsStatusConditionTrue(cat.Status.Conditions, catalogsv1alpha1.TypePublished) {
		// Published and reachable again: a later failure starts its
		// backoff afresh.
		r.retries.Forget(key)
		return reconcile.Result{RequeueAfter: poll}, nil
	}
	// A digest that held no catalog the adapter can read is not pulled
	// again: each poll looks the tag up (one request) until it moves.
	pullKey, pullInput := key+invalidKey, input+"/"+pinned
	if err := r.retries.Pending(pullKey, pullInput, time.Now()); err != nil {
		return reconcile.Result{RequeueAfter: poll}, nil
	}
	cfg, err := r.pull(ctx, pinned)
	if err != nil {
		if errors.Is(err, fetch.ErrInvalidContent) {
			r.retries.Failed(pullKey, pullInput, err, false, time.Now())
			_, werr := r.failed(ctx, cat, catalogsv1alpha1.ReasonInvalid, fmt.Sprintf("The catalog image %s holds no catalog the adapter can read: %v. "+
				"Push a fixed catalog (the tag is looked up every %s), or publish one over the adapter's limits from outside the cluster with rukpak-kapp catalog push.", pinned, err, poll), nil)
			return reconcile.Result{RequeueAfter: poll}, werr
		}
		return r.retry(ctx, cat, key, input, err, func(next string) string {
			return fmt.Sprintf("The catalog image %s could not be pulled: %v. It is pulled again at %s.", pinned, err, next)
		})
	}
	r.retries.Forget(key)
	pub := catalog.Publish(cfg, catalog.Options{Domain: cat.Spec.Domain, Namespace: cat.Namespace})
	if len(pub.Packages) == 0 {
		_, werr := r.failed(ctx, cat, catalogsv1alpha1.ReasonInvalid, fmt.Sprintf("No bundle of the catalog %s can be published as a Package (%s). Push a fixed catalog; the tag is looked up every %s.", pinned, refusals(pub), poll), nil)
		return reconcile.Result{RequeueAfter: poll}, werr
	}
	if err := r.write(ctx, cat, pub); err != nil {
		return r.failed(ctx, cat, catalogsv1alpha1.ReasonWriteFailed, fmt.Sprintf("The packages of %s could not be written through kapp-controller's packaging API (the APIService v1alpha1.data.packaging.carvel.dev): %v. Written again with backoff.", pinned, err), err)
	}
	msg := fmt.Sprintf("Published %d Packages and %d PackageMetadatas of %s.", len(pub.Packages), len(pub.Metadata), pinned)
	if len(pub.Refused) > 0 {
		msg += fmt.Sprintf(" %d refused: %s.", len(pub.Refused), refusals(pub))
	}
	status := cat.Status.DeepCopy()
	status.ResolvedImage = pinned
	status.Packages, status.PackageMetadatas = int32(len(pub.Packages)), int32(len(pub.Metadata))
	status.Refused = nil
	for i, ref := range pub.Refused {
		if i == maxRefused {
			break
		}
		status.Refused = append(status.Refused, ref.String())
	}
	setPublished(status, cat.Generation, metav1.ConditionTrue, catalogsv1alpha1.ReasonPublished, msg)
	return reconcile.Result{RequeueAfter: poll}, r.writeStatus(ctx, cat, status)
}

func refusals(pub catalog.Published) string {
	if len(pub.Refused) == 0 {
		return "nothing refused"
	}
	return "the first: " + pub.Refused[0].String()
}

func setPublished(status *catalogsv1alpha1.OperatorCatalogStatus, gen int64, s metav1.ConditionStatus, reason, msg string) {
	status.ObservedGeneration = gen
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: catalogsv1alpha1.TypePublished, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
}

// invalidKey suffixes a catalog's key for the digest that held no catalog
// the adapter can read.
const invalidKey = "/invalid"

// Every request to a registry is bounded, so that a registry that does not
// answer fails like one that refuses, and holds a worker no longer: a
// look-up is one small request, a pull reads a whole catalog image.
const (
	ResolveTimeout = 30 * time.Second
	PullTimeout    = 2 * time.Minute
	// workers look catalogs up side by side: a slow registry holds one.
	workers = 4
)

func (r *Reconciler) resolve(ctx context.Context, ref string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	return r.images.Resolve(ctx, ref)
}

func (r *Reconciler) pull(ctx context.Context, pinned string) (*declcfg.DeclarativeConfig, error) {
	ctx, cancel := context.WithTimeout(ctx, PullTimeout)
	defer cancel()
	return r.images.Pull(ctx, pinned)
}

// retry reports a failed request to the registry, remembered under key
// for input, with the time of its next attempt (msg says it), and looks
// again then.
func (r *Reconciler) retry(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, key, input string, err error, msg func(next string) string) (reconcile.Result, error) {
	next := fetch.NextAttempt(r.retries.Failed(key, input, err, true, time.Now()))
	if _, werr := r.failed(ctx, cat, catalogsv1alpha1.ReasonPullFailed, msg(next.UTC().Format(time.RFC3339)), nil); werr != nil {
		return reconcile.Result{}, werr
	}
	log.FromContext(ctx).Error(err, "catalog image unreachable; retrying with backoff", "nextAttempt", next.UTC().Format(time.RFC3339))
	return reconcile.Result{RequeueAfter: max(time.Until(next), time.Millisecond)}, nil
}

// failed reports a failure; cause, when not nil, is returned for backoff.
func (r *Reconciler) failed(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, reason, msg string, cause error) (reconcile.Result, error) {
	status := cat.Status.DeepCopy()
	setPublished(status, cat.Generation, metav1.ConditionFalse, reason, msg)
	if err := r.writeStatus(ctx, cat, status); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, cause
}

// writeStatus writes status when it says something new (one write per
// change, none at rest), through the adapter's status writer, with its
// Event.
func (r *Reconciler) writeStatus(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, status *catalogsv1alpha1.OperatorCatalogStatus) error {
	if reflect.DeepEqual(&cat.Status, status) {
		return nil
	}
	before := cat.DeepCopy()
	cat.Status = *status
	if err := r.status(ctx, cat, before, before.Status.Conditions, cat.Status.Conditions); err != nil {
		return fmt.Errorf("write the status of OperatorCatalog %s/%s: %w", cat.Namespace, cat.Name, err)
	}
	return nil
}

// write creates what is new and updates what changed; nothing is deleted.
// What cat published before is listed once, so an unchanged object costs
// no request.
func (r *Reconciler) write(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, pub catalog.Published) error {
	published, err := r.published(ctx, cat)
	if err != nil {
		return err
	}
	live := map[string]client.Object{}
	for _, o := range published {
		live[key(o)] = o
	}
	var objs []client.Object
	for _, m := range pub.Metadata {
		objs = append(objs, m)
	}
	for _, p := range pub.Packages {
		objs = append(objs, p)
	}
	for _, o := range objs {
		labels := o.GetLabels()
		labels[LabelCatalog] = cat.Name
		o.SetLabels(labels)
		if err := r.upsert(ctx, o, live[key(o)]); err != nil {
			return err
		}
	}
	return nil
}

func key(o client.Object) string {
	return fmt.Sprintf("%T/%s", o, o.GetName())
}

// published lists what cat published: the Packages and PackageMetadatas in
// its namespace with its label (kapp-controller's API adds those of its
// global packaging namespace to every namespace's list; they are not
// cat's).
func (r *Reconciler) published(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog) ([]client.Object, error) {
	sel := client.MatchingLabels{LabelCatalog: cat.Name}
	var pkgs datav1alpha1.PackageList
	if err := r.direct.List(ctx, &pkgs, client.InNamespace(cat.Namespace), sel); err != nil {
		return nil, fmt.Errorf("list the Packages OperatorCatalog %s/%s published: %w", cat.Namespace, cat.Name, err)
	}
	var metas datav1alpha1.PackageMetadataList
	if err := r.direct.List(ctx, &metas, client.InNamespace(cat.Namespace), sel); err != nil {
		return nil, fmt.Errorf("list the PackageMetadatas OperatorCatalog %s/%s published: %w", cat.Namespace, cat.Name, err)
	}
	var out []client.Object
	for i := range pkgs.Items {
		if pkgs.Items[i].Namespace == cat.Namespace {
			out = append(out, &pkgs.Items[i])
		}
	}
	for i := range metas.Items {
		if metas.Items[i].Namespace == cat.Namespace {
			out = append(out, &metas.Items[i])
		}
	}
	return out, nil
}

// upsert makes want so: updated over live when cat published it before,
// else created (or, when someone made it by hand, updated over it).
func (r *Reconciler) upsert(ctx context.Context, want, live client.Object) error {
	if live == nil {
		err := r.client.Create(ctx, want, client.FieldOwner(fieldowner.Name))
		if err == nil || !apierrors.IsAlreadyExists(err) {
			return err
		}
		live = want.DeepCopyObject().(client.Object)
		if err := r.direct.Get(ctx, client.ObjectKeyFromObject(want), live); err != nil {
			return err
		}
	}
	if same(live, want) {
		return nil
	}
	want.SetResourceVersion(live.GetResourceVersion())
	return r.client.Update(ctx, want, client.FieldOwner(fieldowner.Name))
}

// same compares what a publication says of an object: its labels,
// annotations and spec.
func same(live, want client.Object) bool {
	if !reflect.DeepEqual(live.GetLabels(), want.GetLabels()) || !reflect.DeepEqual(live.GetAnnotations(), want.GetAnnotations()) {
		return false
	}
	switch w := want.(type) {
	case *datav1alpha1.Package:
		return reflect.DeepEqual(live.(*datav1alpha1.Package).Spec, w.Spec)
	case *datav1alpha1.PackageMetadata:
		return reflect.DeepEqual(live.(*datav1alpha1.PackageMetadata).Spec, w.Spec)
	}
	return false
}

// unpublish withdraws everything cat published, then lets it go.
func (r *Reconciler) unpublish(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog) error {
	if !controllerutil.ContainsFinalizer(cat, Finalizer) {
		return nil
	}
	published, err := r.published(ctx, cat)
	if err != nil {
		return err
	}
	var failed []string
	for _, o := range published {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, o)); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("withdraw what OperatorCatalog %s/%s published: %s", cat.Namespace, cat.Name, strings.Join(failed, "; "))
	}
	patch := client.MergeFrom(cat.DeepCopy())
	controllerutil.RemoveFinalizer(cat, Finalizer)
	if err := r.client.Patch(ctx, cat, patch, client.FieldOwner(fieldowner.Name)); err != nil {
		return fmt.Errorf("remove the finalizer of OperatorCatalog %s/%s: %w", cat.Namespace, cat.Name, err)
	}
	log.FromContext(ctx).Info("withdrew an OperatorCatalog's packages and package metadatas", "objects", len(published))
	return nil
}
