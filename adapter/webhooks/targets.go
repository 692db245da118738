package webhooks

import (
	"bytes"
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
)

// Target is an object whose caBundle must trust the server's CA.
type Target struct {
	// Object names it: an empty object of its kind with its name set.
	Object client.Object
	// Inject puts bundle where the API server reads it in obj, a copy of
	// the live object, and says whether that changed anything.
	Inject func(obj client.Object, bundle []byte) bool
}

// ValidatingWebhookConfiguration is the configuration of that name: every
// webhook in it that calls a Service is served here.
func ValidatingWebhookConfiguration(name string) Target {
	return Target{
		Object: &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}},
		Inject: func(obj client.Object, bundle []byte) bool {
			vwc := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration)
			changed := false
			for i := range vwc.Webhooks {
				cc := &vwc.Webhooks[i].ClientConfig
				if cc.Service != nil && !bytes.Equal(cc.CABundle, bundle) {
					cc.CABundle, changed = bundle, true
				}
			}
			return changed
		},
	}
}

// CRDConversion is the conversion webhook of the CRD of that name (the
// BundleDeployment CRD's, once it converts between versions).
func CRDConversion(name string) Target {
	return Target{
		Object: &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}},
		Inject: func(obj client.Object, bundle []byte) bool {
			crd := obj.(*apiextensionsv1.CustomResourceDefinition)
			conv := crd.Spec.Conversion
			if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil ||
				bytes.Equal(conv.Webhook.ClientConfig.CABundle, bundle) {
				return false
			}
			conv.Webhook.ClientConfig.CABundle = bundle
			return true
		},
	}
}

// inject writes bundle into t's live object when it is not there. A
// target that does not exist is left alone: its manifest brings it, and
// the watch then brings it here.
func inject(ctx context.Context, c client.Reader, writer client.Client, t Target, bundle []byte) error {
	live := t.Object.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(t.Object), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("read %T %s: %w", t.Object, t.Object.GetName(), err)
	}
	obj := live.DeepCopyObject().(client.Object)
	if !t.Inject(obj, bundle) {
		return nil
	}
	// An update, not a patch: it carries the resourceVersion read, so a
	// concurrent change is retried from the watch instead of overwritten.
	if err := writer.Update(ctx, obj, client.FieldOwner(fieldowner.Name)); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("write the caBundle of %T %s: %w", t.Object, t.Object.GetName(), err)
	}
	return nil
}
