package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

// The RBAC check reads the release's own manifest: the copy built into the
// binary is config/rbac/role.yaml as it is.
func TestAdapterRBACIsTheRelease(t *testing.T) {
	release, err := os.ReadFile("../../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(adapterRBAC, release) {
		t.Error("cmd/rukpak-kapp/client/adapter_rbac.yaml is not config/rbac/role.yaml: run go generate ./cmd/rukpak-kapp/client")
	}
}

// Every verb of every rule of the ClusterRole and the Role is asked for,
// catalogs' included: the Role's in the system namespace check is given,
// the ClusterRole's cluster-wide; a rule's writes are named first.
func TestAdapterRights(t *testing.T) {
	rights, err := adapterRights(adapterRBAC, "sys")
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	for _, r := range rights {
		asked[r.String()] = true
	}
	for _, doc := range strings.Split(string(adapterRBAC), "\n---\n") {
		var role struct {
			Kind  string              `json:"kind"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		where := ""
		if role.Kind == "Role" {
			where = " in sys"
		}
		for _, rule := range role.Rules {
			for _, verb := range rule.Verbs {
				for _, group := range rule.APIGroups {
					for _, res := range rule.Resources {
						name := res
						if group != "" {
							name += "." + group
						}
						if len(rule.ResourceNames) > 0 {
							name += " named " + rule.ResourceNames[0]
						}
						if !asked[verb+" "+name+where] {
							t.Errorf("%s %s%s (%s) is not asked for", verb, name, where, role.Kind)
						}
					}
				}
			}
		}
	}
	for _, want := range []string{
		"watch operatorcatalogs.catalogs.rukpak-kapp.dev",
		"patch operatorcatalogs/status.catalogs.rukpak-kapp.dev",
		"create packages.data.packaging.carvel.dev",
		"watch packagemetadatas.data.packaging.carvel.dev",
		"create packageinstalls.packaging.carvel.dev in sys",
		"impersonate:serviceaccount serviceaccounts.authentication.k8s.io in sys",
		"impersonate-on:serviceaccount:list *.*",
		"impersonate-on:serviceaccount:create customresourcedefinitions.apiextensions.k8s.io",
		"update customresourcedefinitions.apiextensions.k8s.io named bundledeployments.core.rukpak.io",
		"get secrets named kapp-controller-config",
	} {
		if !asked[want] {
			t.Errorf("%q is not asked for", want)
		}
	}
	status := slices.IndexFunc(rights, func(r right) bool { return r.res.Resource == "bundledeployments" && r.res.Subresource == "status" })
	if got := rights[status].String(); got != "patch bundledeployments/status.core.rukpak.io" {
		t.Errorf("the status rule's first right is %q, want its patch", got)
	}
}

// fakeCluster is an installation as config/default makes it, healthy, with
// the adapter running: what check sees through controller-runtime's fake
// client and client-go's fake discovery. creates answers every create
// check makes (the webhook probe, each SubjectAccessReview).
func fakeCluster(t *testing.T, creates func(obj client.Object) error) checker {
	t.Helper()
	return fakeClusterWith(t, creates, nil)
}

// fakeClusterWith is fakeCluster whose adapter Deployment is given the
// container args (when not nil), with more objects in it.
func fakeClusterWith(t *testing.T, creates func(obj client.Object) error, args []string, more ...client.Object) checker {
	t.Helper()
	scheme, err := adapter.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca, err := certs.NewCA("check test CA", now)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "rukpak-system"
	apiService := schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}
	mapper := meta.NewDefaultRESTMapper(nil)
	for gvk := range scheme.AllKnownTypes() {
		mapper.Add(gvk, meta.RESTScopeRoot)
	}
	for _, gvk := range []schema.GroupVersionKind{appsv1.SchemeGroupVersion.WithKind("Deployment"), coordinationv1.SchemeGroupVersion.WithKind("Lease")} {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	mapper.Add(apiService, meta.RESTScopeRoot)
	service := &unstructured.Unstructured{}
	service.SetGroupVersionKind(apiService)
	service.SetName(packagingService)
	_ = unstructured.SetNestedSlice(service.Object, []any{map[string]any{"type": "Available", "status": "True"}}, "status", "conditions")
	hooks := &unstructured.Unstructured{}
	hooks.SetAPIVersion("admissionregistration.k8s.io/v1")
	hooks.SetKind("ValidatingWebhookConfiguration")
	hooks.SetName(webhookConfig)
	_ = unstructured.SetNestedSlice(hooks.Object, []any{map[string]any{"name": "crd-upgrade-safety.core.rukpak.io",
		"clientConfig": map[string]any{"caBundle": base64.StdEncoding.EncodeToString(ca.CertPEM)}}}, "webhooks")
	objs := []client.Object{service, hooks,
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: bundleDeploymentF}, Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Versions:   []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true}, {Name: "v1alpha2", Served: true, Storage: true}},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: ca.CertPEM}}}}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "operatorcatalogs.catalogs.rukpak-kapp.dev"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: adapterName},
			Spec:   appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Args: args}}}}},
			Status: appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: "True"}}}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaderLease},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: new("rukpak-kapp-0"), RenewTime: &metav1.MicroTime{Time: now}}},
	}
	objs = append(objs, more...)
	for _, kind := range []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind(kind)
		u.SetName(admissionPolicy)
		objs = append(objs, u)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			return creates(obj)
		},
	}).Build()
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "kappctrl.k14s.io/v1alpha1", APIResources: []metav1.APIResource{{Name: "apps", Kind: "App", Namespaced: true}}},
	}}}
	return checker{c: c, disc: disc, ns: ns, now: now}
}

// byName are a run's results by check.
func byName(results []CheckResult) map[string]CheckResult {
	out := map[string]CheckResult{}
	for _, r := range results {
		out[r.Name] = r
	}
	return out
}

// A user who may only read runs check on a healthy installation: the
// webhook probe (a dry-run create) and the RBAC line (SubjectAccessReviews)
// cannot run, so each says what it did not verify and the right that would
// let it, as a warning; nothing fails, so check exits 0.
func TestCheck_ReadOnlyUser(t *testing.T) {
	t.Parallel()
	refuse := func(obj client.Object) error {
		gr := schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}
		if _, ok := obj.(*rukpakv1alpha1.BundleDeployment); ok {
			gr = schema.GroupResource{Group: "core.rukpak.io", Resource: "bundledeployments"}
		}
		return apierrors.NewForbidden(gr, "", errors.New(`User "viewer" cannot create resource "`+gr.Resource+`" in API group "`+gr.Group+`" at the cluster scope`))
	}
	results := fakeCluster(t, refuse).run(context.Background())
	for _, r := range results {
		if r.Status == CheckFail {
			t.Errorf("a read-only user fails %+v", r)
		}
	}
	got := byName(results)
	for name, right := range map[string]string{
		"webhooks reachable": "create bundledeployments.core.rukpak.io",
		"adapter RBAC":       "create subjectaccessreviews.authorization.k8s.io",
	} {
		r := got[name]
		if r.Status != CheckWarn || !strings.HasPrefix(r.Message, "not verified") || !strings.Contains(r.Fix, right) {
			t.Errorf("%s: %+v, want a warning that it was not verified, naming %q", name, r, right)
		}
	}
	for _, r := range results {
		t.Logf("%-4s  %-22s %s (fix: %s)", r.Status, r.Name, r.Message, r.Fix)
	}
}

// With the rights to ask, the RBAC line asks for every right of
// config/rbac and fails naming those the adapter lacks, writes first.
func TestCheck_AdapterRBAC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		lacks   func(a *authorizationv1.ResourceAttributes) bool
		status  string
		message string
	}{
		{name: "all granted", lacks: func(*authorizationv1.ResourceAttributes) bool { return false }, status: CheckOK, message: "may do all"},
		{name: "a rule removed", lacks: func(a *authorizationv1.ResourceAttributes) bool {
			return a.Resource == "bundledeployments" && a.Subresource == "status"
		}, status: CheckFail, message: "system:serviceaccount:rukpak-system:rukpak-kapp may not: patch bundledeployments/status.core.rukpak.io, update bundledeployments/status.core.rukpak.io, get bundledeployments/status.core.rukpak.io"},
		{name: "catalogs' rules removed", lacks: func(a *authorizationv1.ResourceAttributes) bool {
			return a.Group == "catalogs.rukpak-kapp.dev"
		}, status: CheckFail, message: "may not: patch operatorcatalogs.catalogs.rukpak-kapp.dev, get operatorcatalogs.catalogs.rukpak-kapp.dev"},
		{name: "nothing granted", lacks: func(*authorizationv1.ResourceAttributes) bool { return true }, status: CheckFail, message: " more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			review := func(obj client.Object) error {
				if sar, ok := obj.(*authorizationv1.SubjectAccessReview); ok {
					sar.Status.Allowed = !tc.lacks(sar.Spec.ResourceAttributes)
				}
				return nil
			}
			r := fakeCluster(t, review).rbac(context.Background())
			if r.Status != tc.status || !strings.Contains(r.Message, tc.message) {
				t.Errorf("%+v, want %s saying %q", r, tc.status, tc.message)
			}
		})
	}
}
