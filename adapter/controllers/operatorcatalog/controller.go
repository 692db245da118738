package operatorcatalog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
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

// StatusWriter stores obj's status as changed from before, locked by the
// resourceVersion read (a stale read gets a conflict), and records the
// transition of its conditions (was to now) as an Event: the adapter's one
// status write (kube.ConditionsWriter), which adapter.NewManager gives.
type StatusWriter func(ctx context.Context, obj, before client.Object, was, now []metav1.Condition) error

// OperatorCatalogReconciler publishes OperatorCatalogs.
type OperatorCatalogReconciler struct {
	client client.Client
	cached client.Reader
	direct client.Reader
	// packages writes what a catalog publishes.
	packages packagingapi.Writer
	images   Images
	status   StatusWriter
	// installs says which retracted Packages are kept.
	installs Installs
	// served says whether the packaging API answers.
	served *Served
	// now is the clock of the refusals' backoff.
	now func() time.Time
	// retries holds back the registry requests of a catalog that failed
	// until their backoff has passed.
	retries fetch.Backoff

	// mu guards kept, and what the watch of published objects reads of
	// it.
	mu sync.Mutex
	// kept is each catalog's publication.
	kept map[types.NamespacedName]*publication
	// lookups is each catalog's last look-up of its tag.
	lookups map[string]lookup
}

// lookup is a tag looked up for a catalog's input (UID and generation)
// at a time.
type lookup struct {
	input, pinned string
	at            time.Time
}

// lookedUp is the digest key's tag was found at for input, while its poll
// has not passed since; false when the tag is to be looked up.
func (r *OperatorCatalogReconciler) lookedUp(key, input string, poll time.Duration) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.lookups[key]
	if !ok || l.input != input || r.now().Sub(l.at) >= poll {
		return "", false
	}
	return l.pinned, true
}

// New is the controller's reconciler: c writes OperatorCatalogs and the
// packages; cached reads OperatorCatalogs and the metadata of what
// catalogs published (the catalogs' cache: every namespace, only
// labelled packages); direct reads a catalog's pull secret and confirms a
// published object before writing it again; images reaches the catalog
// images; status writes the catalog's status; installs says which entries
// BundleDeployments install; served follows whether the packaging API
// answers.
func New(c client.Client, cached, direct client.Reader, images Images, status StatusWriter, installs Installs, served *Served) *OperatorCatalogReconciler {
	return &OperatorCatalogReconciler{client: c, cached: cached, direct: direct, packages: packagingapi.NewWriter(c, direct), images: images, status: status, installs: installs, served: served,
		now: time.Now, kept: map[types.NamespacedName]*publication{}, lookups: map[string]lookup{}}
}

// Poll is how often cat's image is looked up.
func Poll(cat *catalogsv1alpha1.OperatorCatalog) time.Duration {
	if cat.Spec.PollInterval == nil {
		return DefaultPoll
	}
	return max(cat.Spec.PollInterval.Duration, MinPoll)
}

// Reconcile reads the catalog, runs its steps, then writes its status
// once, as the BundleDeployment reconciler does.
func (r *OperatorCatalogReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cat := &catalogsv1alpha1.OperatorCatalog{}
	if err := r.cached.Get(ctx, req.NamespacedName, cat); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cat.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.unpublish(ctx, cat)
	}
	before := cat.DeepCopy()
	res, err := r.steps(ctx, cat)
	// The steps' own writes (the finalizer) moved the resourceVersion the
	// status is locked by; its status is as read.
	cat.ObjectMeta.DeepCopyInto(&before.ObjectMeta)
	if werr := r.writeStatus(ctx, cat, before); werr != nil {
		if apierrors.IsConflict(werr) {
			// A status read stale is not written over; another look
			// writes it afresh (a failed registry request is remembered
			// for it, not made again), and nothing is logged as an error.
			return reconcile.Result{Requeue: true}, nil
		}
		return reconcile.Result{}, errors.Join(err, werr)
	}
	return res, err
}

// steps keep the finalizer, look the image up, publish a new digest or
// repair what changed of the last one, and say so in cat's status (not
// yet written).
func (r *OperatorCatalogReconciler) steps(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(cat, Finalizer) {
		patch := client.MergeFrom(cat.DeepCopy())
		controllerutil.AddFinalizer(cat, Finalizer)
		if err := r.client.Patch(ctx, cat, patch, client.FieldOwner(fieldowner.Name)); err != nil {
			return reconcile.Result{}, fmt.Errorf("add the finalizer to OperatorCatalog %s/%s: %w", cat.Namespace, cat.Name, err)
		}
	}
	if down := r.served.Down(); down != "" {
		// Nothing can be published or withdrawn: said once, and looked at
		// again when the API answers (Served wakes every catalog).
		setPublished(&cat.Status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonPackagingAPIUnavailable, outageMessage(down))
		return reconcile.Result{}, nil
	}
	id := types.NamespacedName{Namespace: cat.Namespace, Name: cat.Name}
	key, poll := id.String(), Poll(cat)
	// A registry that failed is not asked again before its backoff has
	// passed, whatever queued the catalog (its own status write's echo, a
	// published object's event): the status already says the failure and
	// its next attempt.
	input := fmt.Sprintf("%s/%d", cat.UID, cat.Generation)
	if err := r.retries.Pending(key, input, time.Now()); err != nil {
		return reconcile.Result{RequeueAfter: max(time.Until(fetch.NextAttempt(err)), time.Millisecond)}, nil
	}
	creds, err := r.credentials(ctx, cat)
	if err != nil {
		return r.retry(ctx, cat, key, input, err, func(next string) string {
			return fmt.Sprintf("The catalog image %s cannot be looked up: %v. It is looked up again at %s.", cat.Spec.Image, err, next)
		})
	}
	// The tag is looked up at its poll and when the spec changes, not at
	// every look: an outage's end, a published object's event or a write
	// that failed use the digest found last.
	pinned, ok := r.lookedUp(key, input, poll)
	if !ok {
		if pinned, err = r.resolve(ctx, cat.Spec.Image, creds); err != nil {
			return r.retry(ctx, cat, key, input, err, func(next string) string {
				return fmt.Sprintf("The catalog image %s could not be looked up%s: %v. It is looked up again at %s.", cat.Spec.Image, withSecret(cat), err, next)
			})
		}
		r.mu.Lock()
		r.lookups[key] = lookup{input: input, pinned: pinned, at: r.now()}
		r.mu.Unlock()
	}
	// A digest that held no catalog the adapter can read is not pulled
	// again: each poll looks the tag up (one request) until it moves.
	pullKey, pullInput := key+invalidKey, input+"/"+pinned
	if err := r.retries.Pending(pullKey, pullInput, time.Now()); err != nil {
		r.retries.Forget(key)
		return reconcile.Result{RequeueAfter: poll}, nil
	}
	p := r.publication(id)
	if p == nil || p.input != pullInput {
		var res reconcile.Result
		if p, res, err = r.read(ctx, cat, id, key, input, pinned, creds); p == nil {
			return res, err
		}
	}
	if !p.complete {
		// Published whole, from the catalog read (a write that failed
		// before is tried again without another pull).
		log.FromContext(ctx).Info("publishing a catalog image", "image", pinned)
		if err := r.publishAll(ctx, cat, p); err != nil {
			return r.writeFailed(ctx, cat, pinned, err)
		}
		r.mu.Lock()
		p.complete = true
		r.mu.Unlock()
	}
	// What the watch saw change, during the publication too (a delete by
	// hand of an object it had written), is checked now, not forgotten.
	if err := r.repair(ctx, cat, p); err != nil {
		return r.writeFailed(ctx, cat, pinned, err)
	}
	// What an earlier revision published and this one does not hold goes,
	// unless an install uses it.
	if err := r.retract(ctx, cat, pinned, p); err != nil {
		return r.writeFailed(ctx, cat, pinned, err)
	}
	// Published and reachable: a later failure starts its backoff afresh.
	r.retries.Forget(key)
	r.report(cat, pinned, p)
	if next := r.nextRetry(p); !next.IsZero() {
		return reconcile.Result{RequeueAfter: min(poll, max(next.Sub(r.now()), time.Millisecond))}, nil
	}
	return reconcile.Result{RequeueAfter: poll}, nil
}

// failedLookAgain is when an object the packaging API refused is written
// again the first time (refusedLookAgain: later ones wait longer).
const failedLookAgain = 30 * time.Second

// read pulls the catalog image pinned and keeps it as id's publication to
// be; nil when it cannot, with the status saying why and the result when
// to look again.
func (r *OperatorCatalogReconciler) read(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, id types.NamespacedName, key, input, pinned string, creds []byte) (*publication, reconcile.Result, error) {
	pullKey, pullInput := key+invalidKey, input+"/"+pinned
	source, err := r.pull(ctx, pinned, creds)
	if errors.Is(err, fetch.ErrSpoolFull) && r.publication(id) != nil {
		// Its own last catalog may be what leaves no room: let it go (what
		// it published stays), and read the new one again.
		r.mu.Lock()
		r.kept[id].close()
		delete(r.kept, id)
		r.mu.Unlock()
		source, err = r.pull(ctx, pinned, creds)
	}
	if err != nil {
		if errors.Is(err, fetch.ErrInvalidContent) {
			r.retries.Forget(key)
			r.retries.Failed(pullKey, pullInput, err, false, time.Now())
			setPublished(&cat.Status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonInvalid, fmt.Sprintf("The catalog image %s holds no catalog the adapter can read: %v. "+
				"Push a fixed catalog; the tag is looked up every %s.", pinned, err, Poll(cat)))
			return nil, reconcile.Result{RequeueAfter: Poll(cat)}, nil
		}
		res, err := r.retry(ctx, cat, key, input, err, func(next string) string {
			return fmt.Sprintf("The catalog image %s could not be pulled%s: %v. It is pulled again at %s.", pinned, withSecret(cat), err, next)
		})
		return nil, res, err
	}
	p := &publication{input: pullInput, catalog: cat.Name, source: source, objects: map[objKey]*entry{}, dirty: map[objKey]bool{}, gone: map[objKey]bool{},
		failed: map[objKey]string{}, refusals: map[objKey]int{}, retryAt: map[objKey]time.Time{}}
	r.keep(id, p)
	return p, reconcile.Result{}, nil
}

// writeFailed says a write failed in a way that may pass by itself, and
// backs off; err names the object (packagingapi.Error). An API that is not
// available is an outage (Served): the catalog says
// PackagingAPIUnavailable and is woken when the API answers again.
func (r *OperatorCatalogReconciler) writeFailed(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, pinned string, err error) (reconcile.Result, error) {
	if r.served.Failed(ctx, err) {
		setPublished(&cat.Status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonPackagingAPIUnavailable, outageMessage(r.served.Down()))
		return reconcile.Result{}, nil
	}
	setPublished(&cat.Status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonWriteFailed, fmt.Sprintf("The packages of %s could not be written, for a reason that may pass by itself (%v). Written again with backoff.", pinned, err))
	return reconcile.Result{}, err
}

// report says what p publishes, in cat's status.
func (r *OperatorCatalogReconciler) report(cat *catalogsv1alpha1.OperatorCatalog, pinned string, p *publication) {
	r.mu.Lock()
	pkgs, metas, conflicts := p.counts()
	var owners []string
	for _, k := range conflicts {
		if o := "OperatorCatalog " + p.objects[k].conflict; !slices.Contains(owners, o) {
			owners = append(owners, o)
		}
	}
	refused := refusalStrings(p)
	// Every refusal is counted; the status lists the first maxRefused.
	refusals := len(p.refused) + len(p.failed)
	first := ""
	if len(refused) > 0 {
		first = fmt.Sprintf(" The first: %s.", refused[0])
	}
	r.mu.Unlock()
	status := &cat.Status
	status.ResolvedImage = pinned
	status.Packages, status.PackageMetadatas = int32(pkgs), int32(metas)
	status.Refused = refused
	msg := fmt.Sprintf("Published %d Packages and %d PackageMetadatas of %s.", pkgs, metas, pinned)
	if first != "" {
		msg += fmt.Sprintf(" %d refused.%s", refusals, first)
	}
	switch {
	case len(conflicts) > 0:
		msg += fmt.Sprintf(" %d are already published in this namespace by %s, which keeps them (the first: %s): give one of the catalogs another spec.domain, or delete one; "+
			"the other then publishes them within seconds.", len(conflicts), strings.Join(owners, ", "), conflicts[0])
		setPublished(status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonConflict, msg)
	case pkgs == 0:
		setPublished(status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonInvalid, fmt.Sprintf("No bundle of the catalog %s can be published as a Package (%d refused). Push a fixed catalog; the tag is looked up every %s.", pinned, refusals, Poll(cat))+
			first)
	default:
		setPublished(status, cat.Generation, metav1.ConditionTrue, catalogsv1alpha1.ReasonPublished, msg)
	}
}

// refusalStrings are the first maxRefused refusals of p: what the catalog
// holds that cannot be published, then the objects the packaging API
// refused, by name.
func refusalStrings(p *publication) []string {
	var out []string
	for _, ref := range p.refused {
		out = append(out, ref.String())
	}
	for _, k := range slices.SortedFunc(maps.Keys(p.failed), func(a, b objKey) int { return strings.Compare(a.String(), b.String()) }) {
		out = append(out, fmt.Sprintf("package %s, %s: the packaging API refused it: %s", p.objects[k].pkg, k, p.failed[k]))
	}
	return out[:min(len(out), maxRefused)]
}

func setPublished(status *catalogsv1alpha1.OperatorCatalogStatus, gen int64, s metav1.ConditionStatus, reason, msg string) {
	status.ObservedGeneration = gen
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: catalogsv1alpha1.TypePublished, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
}

// invalidKey suffixes a catalog's key for the digest that held no catalog
// the adapter can read.
const invalidKey = "/invalid"

// retry reports a failed request to the registry, remembered under key
// for input, with the time of its next attempt (msg says it), and looks
// again then.
func (r *OperatorCatalogReconciler) retry(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, key, input string, err error, msg func(next string) string) (reconcile.Result, error) {
	next := fetch.NextAttempt(r.retries.Failed(key, input, err, true, time.Now()))
	setPublished(&cat.Status, cat.Generation, metav1.ConditionFalse, catalogsv1alpha1.ReasonPullFailed, msg(next.UTC().Format(time.RFC3339)))
	log.FromContext(ctx).Error(err, "catalog image unreachable; retrying with backoff", "nextAttempt", next.UTC().Format(time.RFC3339))
	return reconcile.Result{RequeueAfter: max(time.Until(next), time.Millisecond)}, nil
}

// writeStatus writes cat's status when it says something new (one write
// per change, none at rest), through the adapter's status writer, with
// its Event.
func (r *OperatorCatalogReconciler) writeStatus(ctx context.Context, cat, before *catalogsv1alpha1.OperatorCatalog) error {
	if reflect.DeepEqual(&cat.Status, &before.Status) {
		return nil
	}
	if err := r.status(ctx, cat, before, before.Status.Conditions, cat.Status.Conditions); err != nil {
		return fmt.Errorf("write the status of OperatorCatalog %s/%s: %w", cat.Namespace, cat.Name, err)
	}
	return nil
}

func (r *OperatorCatalogReconciler) publication(id types.NamespacedName) *publication {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kept[id]
}

// keep makes p id's publication, letting the last one go.
func (r *OperatorCatalogReconciler) keep(id types.NamespacedName, p *publication) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kept[id].close()
	r.kept[id] = p
}

// forget lets id's publication and backoff go.
func (r *OperatorCatalogReconciler) forget(id types.NamespacedName) {
	r.mu.Lock()
	r.kept[id].close()
	delete(r.kept, id)
	delete(r.lookups, id.String())
	r.mu.Unlock()
	r.retries.Forget(id.String())
	r.retries.Forget(id.String() + invalidKey)
}
