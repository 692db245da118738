package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// claims says whether the finalizer policy's match conditions name class.
// They are config/admission's list or the one PointFinalizerPolicyAt
// writes, both "object.spec.provisionerClassName in ['a', 'b']": a class
// is claimed where it stands quoted in that list. Benchmarks and the
// take-over suite point the policy away from rukpak's own classes, and a
// probe of one of those must not wait for a finalizer that never comes.
func claims(policy *admissionregistrationv1.MutatingAdmissionPolicy, class string) bool {
	for _, c := range policy.Spec.MatchConditions {
		if strings.Contains(c.Expression, "'"+class+"'") {
			return true
		}
	}
	return false
}

// admissionProbe is a BundleDeployment of class to create as a dry run,
// which asks what the API server's admission makes of one.
func admissionProbe(class string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "harness-admission-probe"},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace: "default", ProvisionerClassName: class,
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "127.0.0.1/probe:v1"}},
		},
	}
}

// claimExpression is the finalizer policy's match condition for classes,
// written as config/admission writes its own list.
func claimExpression(classes ...string) string {
	quoted := make([]string, len(classes))
	for i, c := range classes {
		quoted[i] = "'" + c + "'"
	}
	return "object.spec.provisionerClassName in [" + strings.Join(quoted, ", ") + "]"
}

// PointFinalizerPolicyAt points config/admission's policy at the given
// classes, as its comment tells an operator with another --classes list to
// do: alongside rukpak, the adapter claims alias classes only, and rukpak
// would never remove the adapter's finalizer from its own
// BundleDeployments. It waits until the API server applies the change.
func (e *Env) PointFinalizerPolicyAt(ctx context.Context, classes ...string) error {
	rendered, err := e.Kustomize(ctx, "config/admission")
	if err != nil {
		return err
	}
	var docs [][]byte
	for _, doc := range bytes.Split(rendered, []byte("\n---\n")) {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return fmt.Errorf("read config/admission: %w", err)
		}
		if obj.GetKind() == "MutatingAdmissionPolicy" {
			conds, _, _ := unstructured.NestedSlice(obj.Object, "spec", "matchConditions")
			if len(conds) != 1 {
				return fmt.Errorf("config/admission's policy has %d match conditions, the harness expects one; update it", len(conds))
			}
			conds[0].(map[string]any)["expression"] = claimExpression(classes...)
			if err := unstructured.SetNestedSlice(obj.Object, conds, "spec", "matchConditions"); err != nil {
				return err
			}
		}
		out, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		docs = append(docs, out)
	}
	if _, err := ApplyYAML(ctx, e.Client, bytes.Join(docs, []byte("\n---\n"))); err != nil {
		return fmt.Errorf("point the finalizer policy at %s: %w", strings.Join(classes, ", "), err)
	}
	for range 120 {
		ours, theirs := admissionProbe(classes[0]), admissionProbe("not-"+classes[0])
		err := errors.Join(e.Client.Create(ctx, ours, client.DryRunAll), e.Client.Create(ctx, theirs, client.DryRunAll))
		switch {
		case err == nil && len(ours.Finalizers) == 1 && len(theirs.Finalizers) == 0:
			return nil
		// Right after start the client may not have discovered the CRD yet.
		case err != nil && !meta.IsNoMatchError(err) && !apierrors.IsServiceUnavailable(err):
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("the finalizer policy does not apply to %s only, 30 s after the change", classes[0])
}
