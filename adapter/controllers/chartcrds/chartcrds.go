package chartcrds

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// kapp's labels on what it owns.
var kappLabels = []string{"kapp.k14s.io/app", "kapp.k14s.io/association"}

// Add registers the controller (leader only, like the reconciler).
func Add(mgr ctrl.Manager) error {
	r := &reconciler{client: mgr.GetClient(), mgr: mgr, writers: map[string]client.Client{}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("chartcrds").
		For(&kappctrlv1alpha1.App{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			app, ok := o.(*kappctrlv1alpha1.App)
			return ok && translate.KeepsChartCRDs(app) && len(chartSecrets(app)) > 0
		}))).
		// A chart CRD deleted by hand is created again; one an App took
		// back (an old spec deployed late) is let go again.
		WatchesMetadata(crdMetadata(), handler.EnqueueRequestsFromMapFunc(r.appsFor)).
		Complete(r)
}

func crdMetadata() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}}
}

type reconciler struct {
	client client.Client
	mgr    ctrl.Manager

	mu      sync.Mutex
	writers map[string]client.Client
}

// chartSecrets are the content Secrets of app that hold chart CRDs.
func chartSecrets(app *kappctrlv1alpha1.App) []string {
	var out []string
	for _, f := range app.Spec.Fetch {
		if f.Inline == nil {
			continue
		}
		for _, p := range f.Inline.PathsFrom {
			if p.SecretRef != nil && (p.SecretRef.DirectoryPath == bundlefiles.ChartCRDsDir || strings.HasPrefix(p.SecretRef.DirectoryPath, bundlefiles.ChartCRDsDir+"/")) {
				out = append(out, p.SecretRef.Name)
			}
		}
	}
	return out
}

// appsFor maps a CRD event to the Apps that may have to act: on a delete,
// every App with chart CRDs; otherwise the App of the BundleDeployment the
// CRD's owner label names.
func (r *reconciler) appsFor(ctx context.Context, o client.Object) []reconcile.Request {
	owner := o.GetLabels()[rukpakv1alpha2.LabelOwnerName]
	deleted := o.GetDeletionTimestamp() != nil
	if owner == "" && !deleted {
		if _, err := r.liveCRD(ctx, o.GetName()); !apierrors.IsNotFound(err) {
			return nil
		}
	}
	apps := &kappctrlv1alpha1.AppList{}
	if err := r.client.List(ctx, apps); err != nil {
		log.FromContext(ctx).Error(err, "list Apps for a CRD change", "crd", o.GetName())
		return nil
	}
	var out []reconcile.Request
	for i := range apps.Items {
		app := &apps.Items[i]
		if !translate.KeepsChartCRDs(app) || len(chartSecrets(app)) == 0 || (owner != "" && app.Labels[rukpakv1alpha2.LabelOwnerName] != owner) {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(app)})
	}
	return out
}

func (r *reconciler) liveCRD(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	m := crdMetadata()
	err := r.client.Get(ctx, client.ObjectKey{Name: name}, m)
	return m, err
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	app := &kappctrlv1alpha1.App{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil || !app.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	crds, err := r.chartCRDs(ctx, app)
	if err != nil {
		return reconcile.Result{}, err
	}
	var writer client.Client
	for _, crd := range crds {
		live, err := r.liveCRD(ctx, crd.GetName())
		switch {
		case apierrors.IsNotFound(err):
			if writer, err = r.writer(app, writer); err != nil {
				return reconcile.Result{}, err
			}
			if err := writer.Create(ctx, crd, client.FieldOwner(fieldowner.Name)); client.IgnoreAlreadyExists(err) != nil {
				return reconcile.Result{}, fmt.Errorf("create chart CRD %s as %s: %w", crd.GetName(), account(app), err)
			}
			log.FromContext(ctx).Info("created a chart CRD", "crd", crd.GetName(), "app", req.String())
		case err != nil:
			return reconcile.Result{}, fmt.Errorf("read chart CRD %s: %w", crd.GetName(), err)
		case ownedByApp(live, app):
			if writer, err = r.writer(app, writer); err != nil {
				return reconcile.Result{}, err
			}
			patch := `{"metadata":{"labels":{"` + strings.Join(append(slices.Clone(kappLabels), rukpakv1alpha2.LabelOwnerKind, rukpakv1alpha2.LabelOwnerName), `":null,"`) + `":null}}}`
			if err := writer.Patch(ctx, live, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(fieldowner.Name)); client.IgnoreNotFound(err) != nil {
				return reconcile.Result{}, fmt.Errorf("let go of chart CRD %s as %s: %w", crd.GetName(), account(app), err)
			}
			log.FromContext(ctx).Info("let go of a chart CRD an App owned", "crd", crd.GetName(), "app", req.String())
		}
	}
	return reconcile.Result{}, nil
}

// ownedByApp says kapp owns the live CRD for app's BundleDeployment: an
// App of an earlier version applied it.
func ownedByApp(live *metav1.PartialObjectMetadata, app *kappctrlv1alpha1.App) bool {
	_, kapp := live.Labels[kappLabels[0]]
	bd := app.Labels[rukpakv1alpha2.LabelOwnerName]
	return kapp && bd != "" && live.Labels[rukpakv1alpha2.LabelOwnerName] == bd
}

// chartCRDs reads the CRDs app's content Secrets hold, as the chart has
// them (without the adapter's mark).
func (r *reconciler) chartCRDs(ctx context.Context, app *kappctrlv1alpha1.App) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, name := range chartSecrets(app) {
		secret := &corev1.Secret{}
		if err := r.client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: name}, secret); err != nil {
			// The reconciler writes the Secrets before the App.
			return nil, fmt.Errorf("read content secret %s/%s: %w", app.Namespace, name, err)
		}
		for _, key := range slices.Sorted(maps.Keys(secret.Data)) {
			objs, err := bundlefiles.Objects(secret.Data[key])
			if err != nil {
				return nil, fmt.Errorf("content secret %s/%s, file %s: %w", app.Namespace, name, key, err)
			}
			for _, u := range objs {
				annotations := u.GetAnnotations()
				delete(annotations, bundlefiles.AnnotationChartCRD)
				u.SetAnnotations(annotations)
				out = append(out, u)
			}
		}
	}
	return out, nil
}

func account(app *kappctrlv1alpha1.App) string {
	return "system:serviceaccount:" + app.Namespace + ":" + app.Spec.ServiceAccountName
}

// writer writes as the account app deploys with, as kapp would have
// (constrained impersonation: config/rbac lets the adapter create and patch
// CRDs as that account, and write nothing else as it).
func (r *reconciler) writer(app *kappctrlv1alpha1.App, have client.Client) (client.Client, error) {
	if have != nil {
		return have, nil
	}
	if app.Spec.ServiceAccountName == "" {
		return nil, fmt.Errorf("app %s/%s names no ServiceAccount to create its chart CRDs as", app.Namespace, app.Name)
	}
	user := account(app)
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.writers[user]; ok {
		return c, nil
	}
	cfg := rest.CopyConfig(r.mgr.GetConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: r.mgr.GetScheme(), Mapper: r.mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("make a client that writes as %s: %w", user, err)
	}
	r.writers[user] = c
	return c, nil
}
