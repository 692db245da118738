package kube

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// LabelMirror marks the copies of referenced Secrets and ConfigMaps that the
// adapter keeps in an App's namespace when Apps are spread over
// --app-namespaces: kapp-controller reads what an App references from the
// App's namespace, while users keep them in the system namespace.
const LabelMirror = "core.rukpak.io/mirror"

// Reference is a Secret or ConfigMap a BundleDeployment names.
type Reference struct {
	Secret bool
	Name   string
}

func (r Reference) String() string {
	if r.Secret {
		return "secret/" + r.Name
	}
	return "configmap/" + r.Name
}

// References are what kapp-controller reads for bd's App as well as the
// content the adapter stores: the pull or auth Secret and configMaps
// sources. None when the adapter fetches the bundle itself.
func References(bd *rukpakv1alpha2.BundleDeployment) []Reference {
	if bundlefiles.AdapterFetches(bd) {
		return nil
	}
	src := bd.Spec.Source
	var out []Reference
	switch {
	case src.Image != nil && src.Image.ImagePullSecretName != "":
		out = append(out, Reference{Secret: true, Name: src.Image.ImagePullSecretName})
	case src.HTTP != nil && src.HTTP.Auth.Secret.Name != "":
		out = append(out, Reference{Secret: true, Name: src.HTTP.Auth.Secret.Name})
	case src.Git != nil && src.Git.Auth.Secret.Name != "":
		out = append(out, Reference{Secret: true, Name: src.Git.Auth.Secret.Name})
	}
	for _, cm := range src.ConfigMaps {
		out = append(out, Reference{Name: cm.ConfigMap.Name})
	}
	return out
}

// Mirror keeps a copy of each reference of bd in its App's namespace ns,
// owned by every BundleDeployment that reads it, so it goes with the last
// of them. A reference missing in the system namespace is left for
// kapp-controller to report; a copy of it is removed.
func Mirror(ctx context.Context, c client.Client, systemNamespace, ns string, bd *rukpakv1alpha2.BundleDeployment) error {
	if ns == systemNamespace {
		return nil
	}
	var errs []error
	for _, ref := range References(bd) {
		if err := mirrorOne(ctx, c, systemNamespace, bd, ns, ref); err != nil {
			errs = append(errs, fmt.Errorf("copy %s into namespace %s for the App: %w", ref, ns, err))
		}
	}
	return errors.Join(errs...)
}

func mirrorOne(ctx context.Context, c client.Client, systemNamespace string, bd *rukpakv1alpha2.BundleDeployment, ns string, ref Reference) error {
	orig, cp := newObject(ref), newObject(ref)
	origErr := c.Get(ctx, client.ObjectKey{Namespace: systemNamespace, Name: ref.Name}, orig)
	cpErr := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, cp)
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
			return client.IgnoreNotFound(c.Delete(ctx, cp))
		}
		return nil
	}
	want := copyOf(orig, ns, bd, cp)
	switch {
	case apierrors.IsNotFound(cpErr):
		return client.IgnoreAlreadyExists(c.Create(ctx, want, client.FieldOwner(fieldowner.Name)))
	case sameCopy(cp, want):
		return nil
	case ref.Secret && cp.(*corev1.Secret).Type != want.(*corev1.Secret).Type:
		// A Secret's type cannot change in place.
		if err := c.Delete(ctx, cp); client.IgnoreNotFound(err) != nil {
			return err
		}
		return c.Create(ctx, want, client.FieldOwner(fieldowner.Name))
	}
	want.SetResourceVersion(cp.GetResourceVersion())
	return c.Update(ctx, want, client.FieldOwner(fieldowner.Name))
}

func newObject(ref Reference) client.Object {
	if ref.Secret {
		return &corev1.Secret{}
	}
	return &corev1.ConfigMap{}
}

// copyOf is the copy of orig in ns, owned by bd as well as whoever owns the
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
