package client

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// The rights asked for outside the system namespace are the release's own
// manifests as they are.
func TestNamespaceRBACIsTheRelease(t *testing.T) {
	for copied, release := range map[*[]byte]string{
		&shardRBAC:        "../../../config/sharding/app-namespaces/rukpak-apps-0.yaml",
		&pullSecretRBAC:   "../../../config/catalogs/pull_secret_role.yaml",
		&dependenciesRBAC: "../../../config/catalogs/dependencies_role.yaml",
	} {
		want, err := os.ReadFile(release)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(*copied, want) {
			t.Errorf("the copy of %s differs from it: run go generate ./cmd/rukpak-kapp/client", release)
		}
	}
}

// The namespace RBAC line asks, as the adapter, for config/sharding's Role
// in each app namespace its Deployment names, for the one Secret each
// catalog names as its pull secret, and for the dependencies role where
// catalogs are; it fails naming what a required binding lacks, with the
// command or manifest that grants it, and tells (without failing) where
// catalogs install no dependencies.
func TestCheck_NamespaceRBAC(t *testing.T) {
	t.Parallel()
	catalogs := []client.Object{
		&catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "private"},
			Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: "registry.example/catalog:1", PullSecret: "creds"}},
		&catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "public"},
			Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: "registry.example/catalog:2"}},
	}
	sharded := []string{"run", "--app-namespaces=apps-0,apps-1"}
	for _, tc := range []struct {
		name    string
		args    []string
		objs    []client.Object
		lacks   func(a *authorizationv1.ResourceAttributes) bool
		refuse  bool
		status  string
		message []string
		fix     string
		onceFix bool
	}{
		{name: "nothing outside the system namespace", status: CheckOK,
			message: []string{"no app namespace and no catalog pull secret"}},
		{name: "all granted", args: sharded, objs: catalogs, status: CheckOK,
			message: []string{"may do what it needs in 2 app namespace(s) and may read 1 catalog pull secret(s)"}},
		{name: "an app namespace without its Role", args: sharded, status: CheckFail,
			lacks:   func(a *authorizationv1.ResourceAttributes) bool { return a.Namespace == "apps-1" },
			message: []string{"app namespace apps-1: create apps.kappctrl.k14s.io in apps-1"},
			fix:     "apply config/sharding/app-namespaces' Role rukpak-kapp and its RoleBinding to rukpak-system:rukpak-kapp in apps-1"},
		{name: "a pull secret the adapter may not read", args: sharded, objs: catalogs, status: CheckFail,
			lacks: func(a *authorizationv1.ResourceAttributes) bool {
				return a.Resource == "secrets" && a.Namespace == "operators"
			},
			message: []string{"catalog operators/private's pull secret creds: get secrets named creds in operators"},
			fix:     "kubectl create rolebinding rukpak-kapp-catalog-pull-secrets -n operators --clusterrole rukpak-kapp-catalog-pull-secrets --serviceaccount rukpak-system:rukpak-kapp"},
		{name: "two pull secrets of one namespace, one binding to make", objs: append(slices.Clone(catalogs),
			&catalogsv1alpha1.OperatorCatalog{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "mirror"},
				Spec: catalogsv1alpha1.OperatorCatalogSpec{Image: "mirror.example/catalog:1", PullSecret: "mirror-creds"}}), status: CheckFail,
			lacks:   func(a *authorizationv1.ResourceAttributes) bool { return a.Resource == "secrets" },
			message: []string{"catalog operators/private's pull secret creds", "catalog operators/mirror's pull secret mirror-creds"},
			fix:     "kubectl create rolebinding rukpak-kapp-catalog-pull-secrets -n operators --clusterrole rukpak-kapp-catalog-pull-secrets --serviceaccount rukpak-system:rukpak-kapp",
			onceFix: true},
		{name: "no dependencies binding", objs: catalogs, status: CheckOK,
			lacks:   func(a *authorizationv1.ResourceAttributes) bool { return a.Resource == "packageinstalls" },
			message: []string{"in 0 app namespace(s) and may read 1 catalog pull secret(s)", "catalogs in operators install no dependencies: kubectl create rolebinding rukpak-kapp-catalog-dependencies -n operators --clusterrole rukpak-kapp-catalog-dependencies --serviceaccount rukpak-system:rukpak-kapp lets them"}},
		{name: "no SubjectAccessReviews", args: sharded, refuse: true, status: CheckWarn,
			message: []string{"not verified"}, fix: "create subjectaccessreviews.authorization.k8s.io"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			review := func(obj client.Object) error {
				sar, ok := obj.(*authorizationv1.SubjectAccessReview)
				if !ok {
					return nil
				}
				if tc.refuse {
					return apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "", errors.New("read only"))
				}
				if sar.Spec.User != "system:serviceaccount:rukpak-system:rukpak-kapp" {
					t.Errorf("asked for %s", sar.Spec.User)
				}
				sar.Status.Allowed = tc.lacks == nil || !tc.lacks(sar.Spec.ResourceAttributes)
				return nil
			}
			k := fakeClusterWith(t, review, tc.args, tc.objs...)
			_, dep, _ := k.adapterDeployment(context.Background())
			r := k.namespaceRBAC(context.Background(), dep)
			for _, m := range tc.message {
				if !strings.Contains(r.Message, m) {
					t.Errorf("%+v, want a message saying %q", r, m)
				}
			}
			if r.Status != tc.status || !strings.Contains(r.Fix, tc.fix) {
				t.Errorf("%+v, want %s with a fix saying %q", r, tc.status, tc.fix)
			}
			if n := strings.Count(r.Fix, tc.fix); tc.onceFix && n != 1 {
				t.Errorf("the fix says %q %d times, want once: %s", tc.fix, n, r.Fix)
			}
		})
	}
}
