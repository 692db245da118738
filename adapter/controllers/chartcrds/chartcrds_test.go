package chartcrds

import (
	"context"
	"slices"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

const ns = "rukpak-system"

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    ` + bundlefiles.AnnotationChartCRD + `: "true"
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, kappctrlv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// chartApp is the App of the BundleDeployment web: a chart whose crds/ its
// content Secret web-crds holds.
func chartApp(serviceAccount string) *kappctrlv1alpha1.App {
	return &kappctrlv1alpha1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{rukpakv1alpha2.LabelOwnerName: "web"}},
		Spec: kappctrlv1alpha1.AppSpec{ServiceAccountName: serviceAccount,
			Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{PathsFrom: []kappctrlv1alpha1.AppFetchInlineSource{
				{SecretRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "web-chart", DirectoryPath: bundlefiles.ChartDir}},
				{SecretRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "web-crds", DirectoryPath: bundlefiles.ChartCRDsDir}},
			}}}},
			Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Inline: &kappctrlv1alpha1.AppFetchInline{
				Paths: map[string]string{translate.ChartCRDsFile: "#@ load(\"@ytt:data\", \"data\")\n"}}}}},
		},
	}
}

// setup is the reconciler over objs, whose writes as the App's account
// (impersonated in a cluster) go through writer, recorded in wrote.
func setup(t *testing.T, objs ...client.Object) (*reconciler, client.Client, *[]string) {
	t.Helper()
	wrote := &[]string{}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).Build()
	writer := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, w client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			*wrote = append(*wrote, "create "+o.GetName())
			return w.Create(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, w client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			*wrote = append(*wrote, "patch "+o.GetName())
			return w.Patch(ctx, o, p, opts...)
		},
	})
	r := &reconciler{client: c, writers: map[string]client.Client{"system:serviceaccount:" + ns + ":installer": writer}}
	return r, c, wrote
}

func crdSecret() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-crds"}, Data: map[string][]byte{"widgets.yaml": []byte(crdYAML)}}
}

func reconcileWeb(t *testing.T, r *reconciler) error {
	t.Helper()
	_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "web"}})
	return err
}

func TestChartCRDsCreatedAsTheAppsAccount(t *testing.T) {
	t.Parallel()
	r, c, wrote := setup(t, chartApp("installer"), crdSecret())
	if err := reconcileWeb(t, r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*wrote, []string{"create widgets.example.com"}) {
		t.Fatalf("wrote %v, want the CRD created as the App's account", *wrote)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "widgets.example.com"}, crd); err != nil {
		t.Fatal(err)
	}
	if _, marked := crd.Annotations[bundlefiles.AnnotationChartCRD]; marked || len(crd.Labels) != 0 {
		t.Errorf("the CRD carries the adapter's mark or owner labels: %v %v", crd.Annotations, crd.Labels)
	}
	// Created once, never updated: Helm's rule for crds/.
	*wrote = nil
	if err := reconcileWeb(t, r); err != nil || len(*wrote) != 0 {
		t.Fatalf("a second reconcile: %v, wrote %v", err, *wrote)
	}
}

func TestChartCRDsAnAppOwnedIsLetGo(t *testing.T) {
	t.Parallel()
	owned := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com",
		Labels: map[string]string{"kapp.k14s.io/app": "1", "kapp.k14s.io/association": "v1.x", rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: "web", "team": "a"}}}
	r, c, wrote := setup(t, chartApp("installer"), crdSecret(), owned)
	if err := reconcileWeb(t, r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*wrote, []string{"patch widgets.example.com"}) {
		t.Fatalf("wrote %v", *wrote)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "widgets.example.com"}, crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Labels) != 1 || crd.Labels["team"] != "a" {
		t.Errorf("labels %v, want only the user's", crd.Labels)
	}
}

func TestChartCRDsAnotherOwnersAreLeftAlone(t *testing.T) {
	t.Parallel()
	theirs := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com",
		Labels: map[string]string{"kapp.k14s.io/app": "1", rukpakv1alpha2.LabelOwnerName: "other"}}}
	r, _, wrote := setup(t, chartApp("installer"), crdSecret(), theirs)
	if err := reconcileWeb(t, r); err != nil || len(*wrote) != 0 {
		t.Fatalf("reconcile: %v, wrote %v", err, *wrote)
	}
}

func TestChartCRDsNeedAnAccount(t *testing.T) {
	t.Parallel()
	r, _, wrote := setup(t, chartApp(""), crdSecret())
	err := reconcileWeb(t, r)
	if err == nil || !strings.Contains(err.Error(), "names no ServiceAccount") || len(*wrote) != 0 {
		t.Fatalf("reconcile: %v, wrote %v", err, *wrote)
	}
}

func TestAppsFor(t *testing.T) {
	t.Parallel()
	other := chartApp("installer")
	other.Name, other.Labels = "other", map[string]string{rukpakv1alpha2.LabelOwnerName: "other"}
	plain := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain", Labels: map[string]string{rukpakv1alpha2.LabelOwnerName: "plain"}}}
	r, _, _ := setup(t, chartApp("installer"), other, plain)
	names := func(reqs []reconcile.Request) []string {
		var out []string
		for _, q := range reqs {
			out = append(out, q.Name)
		}
		slices.Sort(out)
		return out
	}
	ctx := context.Background()
	now := metav1.Now()
	gone := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", DeletionTimestamp: &now}}
	if got := names(r.appsFor(ctx, gone)); !slices.Equal(got, []string{"other", "web"}) {
		t.Errorf("a deleted CRD wakes %v, want every App with chart CRDs", got)
	}
	taken := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com", Labels: map[string]string{rukpakv1alpha2.LabelOwnerName: "web"}}}
	if got := names(r.appsFor(ctx, taken)); !slices.Equal(got, []string{"web"}) {
		t.Errorf("a CRD web's App took back wakes %v, want [web]", got)
	}
}
