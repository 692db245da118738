package e2e_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

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

func objKey(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name}
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
