package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// plainBD is a plain BundleDeployment of an image. It is deleted, and its
// deletion waited for, when the spec ends.
func plainBD(ctx context.Context, name, ref string, mutate ...func(*rukpakv1alpha2.BundleDeployment)) *rukpakv1alpha2.BundleDeployment {
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace:     "default",
			ProvisionerClassName: rukpakv1alpha2.ClassPlain,
			Source:               rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}},
		},
	}
	for _, m := range mutate {
		m(bd)
	}
	ExpectWithOffset(1, env.Client.Create(ctx, bd)).To(Succeed())
	DeferCleanup(deleteAndWait, bd.Name)
	return bd
}

func deleteAndWait(ctx context.Context, name string) {
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, bd))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), bd))
	}).WithContext(ctx).Should(BeTrue(), "BundleDeployment %s was not deleted", name)
}

func getBD(ctx context.Context, name string) func() (*rukpakv1alpha2.BundleDeployment, error) {
	return func() (*rukpakv1alpha2.BundleDeployment, error) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		return bd, env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)
	}
}

// haveCondition matches a BundleDeployment whose condition t has the status,
// the reason and a message containing msg, for its current generation.
func haveCondition(t string, status metav1.ConditionStatus, reason, msg string) types.GomegaMatcher {
	return WithTransform(func(bd *rukpakv1alpha2.BundleDeployment) string {
		c := apimeta.FindStatusCondition(bd.Status.Conditions, t)
		if c == nil {
			return fmt.Sprintf("no %s condition", t)
		}
		return fmt.Sprintf("%s/%s/gen-current=%v: %s", c.Status, c.Reason, c.ObservedGeneration == bd.Generation, c.Message)
	}, And(
		HavePrefix(fmt.Sprintf("%s/%s/gen-current=true: ", status, reason)),
		ContainSubstring(msg),
	))
}

func getApp(ctx context.Context, name string) (*kappctrlv1alpha1.App, error) {
	app := &kappctrlv1alpha1.App{}
	return app, env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)
}

// ownedCRDs lists the CRDs labelled as installed by BundleDeployment bd.
func ownedCRDs(ctx context.Context, bd string) func() ([]string, error) {
	return func() ([]string, error) {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		err := env.Client.List(ctx, list, client.MatchingLabels{
			rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind,
			rukpakv1alpha2.LabelOwnerName: bd,
		})
		var names []string
		for _, c := range list.Items {
			names = append(names, c.Name)
		}
		return names, err
	}
}

// metav1ObjectMeta is the metadata a user writes: a name and nothing the
// server set.
func metav1ObjectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// randSuffix keeps names unique across specs that share a server.
func randSuffix() string { return rand.String(5) }

// basicAuthSecret creates a Secret in the system namespace in rukpak's
// basic-auth layout (username, password), deleted when the spec ends.
func basicAuthSecret(ctx context.Context, name, username, password string) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace},
		Data:       map[string][]byte{"username": []byte(username), "password": []byte(password)},
	}
	ExpectWithOffset(1, env.Client.Create(ctx, secret)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, secret) })
}

func objKey(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name}
}

func mustBD(ctx context.Context, name string) *rukpakv1alpha2.BundleDeployment {
	bd, err := getBD(ctx, name)()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return bd
}

// portOf is the port of a host:port address.
func portOf(hostPort string) string {
	_, port, err := net.SplitHostPort(hostPort)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return port
}

// fieldsAfterHost drops the host pattern of a known_hosts line.
func fieldsAfterHost(line []byte) string {
	_, rest, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
	return rest
}

func quoteJSON(s string) string {
	b, err := json.Marshal(s)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return string(b)
}
