package operatorcatalog

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// PullSecretsRole is the ClusterRole (config/catalogs) a namespace binds to
// the adapter's ServiceAccount to let catalogs there name a pull secret.
const PullSecretsRole = "rukpak-kapp-catalog-pull-secrets"

// credentials reads the pull secret cat names (nil when it names none):
// the one Secret of the namespace the adapter reads, where the namespace
// lets it (PullSecretsRole), read when the registry is asked (never cached,
// never watched: the adapter may not list Secrets), so a Secret created,
// fixed or let read after a failure is used at the next attempt the status
// names.
func (r *OperatorCatalogReconciler) credentials(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog) ([]byte, error) {
	name := cat.Spec.PullSecret
	if name == "" {
		return nil, nil
	}
	s := &corev1.Secret{}
	if err := r.direct.Get(ctx, client.ObjectKey{Namespace: cat.Namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("its pull secret %s (spec.pullSecret) is not in namespace %s: create it as a %s Secret", name, cat.Namespace, corev1.SecretTypeDockerConfigJson)
		}
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("the adapter may not read its pull secret %s in namespace %s: let it, in that namespace only, with "+
				"kubectl create rolebinding rukpak-kapp-catalog-pull-secrets -n %s --clusterrole %s --serviceaccount <the adapter's namespace, rukpak-system by default>:rukpak-kapp",
				name, cat.Namespace, cat.Namespace, PullSecretsRole)
		}
		return nil, fmt.Errorf("read its pull secret %s/%s: %w", cat.Namespace, name, err)
	}
	data, ok := s.Data[corev1.DockerConfigJsonKey]
	if s.Type != corev1.SecretTypeDockerConfigJson || !ok {
		return nil, fmt.Errorf("its pull secret %s/%s is of type %q without %s: make it a %s Secret", cat.Namespace, name, s.Type, corev1.DockerConfigJsonKey, corev1.SecretTypeDockerConfigJson)
	}
	return data, nil
}

// withSecret names the credentials a registry request used, for a
// message.
func withSecret(cat *catalogsv1alpha1.OperatorCatalog) string {
	if cat.Spec.PullSecret == "" {
		return " (anonymously: spec.pullSecret names no Secret)"
	}
	return fmt.Sprintf(" with the credentials of Secret %s/%s", cat.Namespace, cat.Spec.PullSecret)
}
