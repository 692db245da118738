package adapter

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// LabelMirror marks the copies of referenced Secrets and ConfigMaps that the
// adapter keeps in an App's namespace when Apps are spread over
// --app-namespaces: kapp-controller reads what an App references from the
// App's namespace, while users keep them in the system namespace.
const LabelMirror = "core.rukpak.io/mirror"

// reference is a Secret or ConfigMap a BundleDeployment names.
type reference struct {
	secret bool
	name   string
}

func (r reference) String() string {
	if r.secret {
		return "secret/" + r.name
	}
	return "configmap/" + r.name
}

// referencesOf are what kapp-controller reads for bd's App besides the
// content the adapter stores: the pull or auth Secret and configMaps
// sources. None when the adapter fetches the bundle itself.
func referencesOf(bd *rukpakv1alpha2.BundleDeployment) []reference {
	if bundle.AdapterFetches(bd) {
		return nil
	}
	src := bd.Spec.Source
	var out []reference
	switch {
	case src.Image != nil && src.Image.ImagePullSecretName != "":
		out = append(out, reference{secret: true, name: src.Image.ImagePullSecretName})
	case src.HTTP != nil && src.HTTP.Auth.Secret.Name != "":
		out = append(out, reference{secret: true, name: src.HTTP.Auth.Secret.Name})
	case src.Git != nil && src.Git.Auth.Secret.Name != "":
		out = append(out, reference{secret: true, name: src.Git.Auth.Secret.Name})
	}
	for _, cm := range src.ConfigMaps {
		out = append(out, reference{name: cm.ConfigMap.Name})
	}
	return out
}

// mirror keeps a copy of each reference of bd in its App's namespace, owned
// by every BundleDeployment that reads it, so it goes with the last of
// them. A reference missing in the system namespace is left for
// kapp-controller to report; a copy of it is removed.
func (r *Reconciler) mirror(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) error {
	ns := r.appNS(bd.Name)
	if ns == r.cfg.SystemNamespace {
		return nil
	}
	var errs []error
	for _, ref := range referencesOf(bd) {
		if err := r.mirrorOne(ctx, bd, ns, ref); err != nil {
			errs = append(errs, fmt.Errorf("copy %s into namespace %s for the App: %w", ref, ns, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Reconciler) mirrorOne(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string, ref reference) error {
	orig, cp := newObject(ref), newObject(ref)
	origErr := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SystemNamespace, Name: ref.name}, orig)
	cpErr := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.name}, cp)
	switch {
	case origErr != nil && !apierrors.IsNotFound(origErr):
		return origErr
	case cpErr != nil && !apierrors.IsNotFound(cpErr):
		return cpErr
	case cpErr == nil && cp.GetLabels()[LabelMirror] != "true":
		// Someone put their own there; kapp-controller reads that one.
		return nil
	case apierrors.IsNotFound(origErr):
		if cpErr == nil {
			return client.IgnoreNotFound(r.client.Delete(ctx, cp))
		}
		return nil
	}
	want := copyOf(orig, ns, bd, cp)
	switch {
	case apierrors.IsNotFound(cpErr):
		return client.IgnoreAlreadyExists(r.client.Create(ctx, want, client.FieldOwner(FieldOwner)))
	case sameCopy(cp, want):
		return nil
	case ref.secret && cp.(*corev1.Secret).Type != want.(*corev1.Secret).Type:
		// A Secret's type cannot change in place.
		if err := r.client.Delete(ctx, cp); client.IgnoreNotFound(err) != nil {
			return err
		}
		return r.client.Create(ctx, want, client.FieldOwner(FieldOwner))
	}
	want.SetResourceVersion(cp.GetResourceVersion())
	return r.client.Update(ctx, want, client.FieldOwner(FieldOwner))
}

func newObject(ref reference) client.Object {
	if ref.secret {
		return &corev1.Secret{}
	}
	return &corev1.ConfigMap{}
}

// copyOf is the copy of orig in ns, owned by bd besides whoever owns the
// live copy already.
func copyOf(orig client.Object, ns string, bd *rukpakv1alpha2.BundleDeployment, live client.Object) client.Object {
	meta := metav1.ObjectMeta{Name: orig.GetName(), Namespace: ns, Labels: map[string]string{LabelMirror: "true"}}
	owners := live.GetOwnerReferences()
	mine := metav1.OwnerReference{APIVersion: rukpakv1alpha2.GroupVersion.String(), Kind: rukpakv1alpha2.OwnerKind, Name: bd.Name, UID: bd.UID}
	found := false
	for _, o := range owners {
		found = found || o.UID == bd.UID
	}
	if !found {
		owners = append(append([]metav1.OwnerReference(nil), owners...), mine)
	}
	meta.OwnerReferences = owners
	switch o := orig.(type) {
	case *corev1.Secret:
		return &corev1.Secret{ObjectMeta: meta, Type: o.Type, Data: o.Data}
	default:
		cm := o.(*corev1.ConfigMap)
		return &corev1.ConfigMap{ObjectMeta: meta, Data: cm.Data, BinaryData: cm.BinaryData}
	}
}

func sameCopy(live, want client.Object) bool {
	if !apiequality.Semantic.DeepEqual(live.GetOwnerReferences(), want.GetOwnerReferences()) {
		return false
	}
	switch l := live.(type) {
	case *corev1.Secret:
		w := want.(*corev1.Secret)
		return l.Type == w.Type && apiequality.Semantic.DeepEqual(l.Data, w.Data)
	default:
		l2, w := live.(*corev1.ConfigMap), want.(*corev1.ConfigMap)
		return apiequality.Semantic.DeepEqual(l2.Data, w.Data) && apiequality.Semantic.DeepEqual(l2.BinaryData, w.BinaryData)
	}
}

// referencesIndex indexes BundleDeployments by the Secrets and ConfigMaps
// they reference, when Apps are spread over app namespaces.
const referencesIndex = "rukpak-kapp.references"

// watchReferences keeps the copies current: a change of an original, or of
// a copy by hand, reconciles every BundleDeployment that references it.
func (r *Reconciler) watchReferences(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	if len(r.cfg.AppNamespaces) == 0 {
		return b, nil
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &rukpakv1alpha2.BundleDeployment{}, referencesIndex, func(o client.Object) []string {
		bd, ok := o.(*rukpakv1alpha2.BundleDeployment)
		if !ok || !r.classes.claims(bd) {
			return nil
		}
		var keys []string
		for _, ref := range referencesOf(r.classes.asBuiltin(bd)) {
			keys = append(keys, ref.String())
		}
		return keys
	})
	if err != nil {
		return nil, fmt.Errorf("index bundle deployments by reference: %w", err)
	}
	return b.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.referencing(true))).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.referencing(false))), nil
}

func (r *Reconciler) referencing(secret bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &rukpakv1alpha2.BundleDeploymentList{}
		key := reference{secret: secret, name: o.GetName()}.String()
		if err := r.client.List(ctx, list, client.MatchingFields{referencesIndex: key}); err != nil {
			log.FromContext(ctx).Error(err, "list bundle deployments for a referenced object", "object", key)
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}
