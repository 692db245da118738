package olm_test

import (
	"context"
	"fmt"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OLM v1's kinds, read as unstructured: rukpak-kapp's module does not
// depend on operator-controller's or catalogd's.
var (
	clusterExtensionGVK = schema.GroupVersionKind{Group: "olm.operatorframework.io", Version: "v1alpha1", Kind: "ClusterExtension"}
	catalogGVK          = schema.GroupVersionKind{Group: "catalogd.operatorframework.io", Version: "v1alpha1", Kind: "Catalog"}
)

// olmObject is the live state of an OLM v1 object, as the specs read it.
type olmObject struct {
	Name, UID  string
	Spec       map[string]any
	Status     map[string]any
	Conditions []metav1.Condition
}

func newObject(gvk schema.GroupVersionKind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	return u
}

// getOLM reads an OLM v1 object, for Eventually.
func getOLM(ctx context.Context, gvk schema.GroupVersionKind, name string) func() (olmObject, error) {
	return func() (olmObject, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return olmObject{}, err
		}
		o := olmObject{Name: u.GetName(), UID: string(u.GetUID())}
		o.Spec, _, _ = unstructured.NestedMap(u.Object, "spec")
		o.Status, _, _ = unstructured.NestedMap(u.Object, "status")
		if raw, ok, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); ok {
			for _, r := range raw {
				var c metav1.Condition
				if m, ok := r.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
					o.Conditions = append(o.Conditions, c)
				}
			}
		}
		return o, nil
	}
}

// haveOLMCondition matches an OLM v1 object's condition t by status, reason
// and a message containing msg.
func haveOLMCondition(t string, status metav1.ConditionStatus, reason, msg string) types.GomegaMatcher {
	return WithTransform(func(o olmObject) string {
		c := apimeta.FindStatusCondition(o.Conditions, t)
		if c == nil {
			return "no " + t + " condition"
		}
		return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
	}, And(HavePrefix(fmt.Sprintf("%s/%s: ", status, reason)), ContainSubstring(msg)))
}

// haveStatusField matches an OLM v1 object's status field.
func haveStatusField(field string, want any) types.GomegaMatcher {
	return WithTransform(func(o olmObject) any { return o.Status[field] }, Equal(want))
}

// setSpec changes an OLM v1 object's spec field, retrying on conflicts.
func setSpec(ctx context.Context, gvk schema.GroupVersionKind, name, field string, value any) {
	EventuallyWithOffset(1, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(u.Object, value, "spec", field); err != nil {
			return err
		}
		return env.Client.Update(ctx, u)
	}).WithContext(ctx).Should(Succeed())
}
