package store

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// PutChunk creates bd's content Secret of c in ns unless it exists. The
// check reads the informer cache, so unchanged content costs no API request.
func (s *Store) PutChunk(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, ns string, c content.Chunk) error {
	err := s.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Name}, &corev1.Secret{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get content secret %s: %w", c.Name, err)
	}
	// The name is the content's hash: one that exists already holds the
	// same files, so AlreadyExists (a racing reconcile) is fine.
	err = s.client.Create(ctx, ContentSecret(bd, ns, c), client.FieldOwner(fieldowner.Name))
	if client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create content secret %s: %w", c.Name, err)
	}
	return nil
}

// ContentSecret is the immutable Secret holding one chunk, owned by bd.
func ContentSecret(bd *rukpakv1alpha2.BundleDeployment, namespace string, c content.Chunk) *corev1.Secret {
	labels := translate.OwnerLabels(bd.Name)
	labels[LabelContent] = "true"
	immutable := true
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name: c.Name, Namespace: namespace, Labels: labels,
			OwnerReferences: translate.OwnerReferences(bd),
		},
		Immutable: &immutable,
		Data:      c.Data,
	}
}

// Prune deletes content Secrets of bdName in ns that current (nil: none)
// does not name. Callers run it only once the App deployed the current
// content, so kapp-controller never loses files it still needs.
func (s *Store) Prune(ctx context.Context, ns, bdName string, current *translate.Packed) error {
	keep := map[string]bool{}
	if current != nil {
		for _, secret := range current.Secrets {
			keep[secret.Name] = true
		}
	}
	list := &corev1.SecretList{}
	if err := s.client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{
		rukpakv1alpha2.LabelOwnerName: bdName, LabelContent: "true",
	}); err != nil {
		return fmt.Errorf("list content secrets: %w", err)
	}
	var errs []error
	for i := range list.Items {
		if secret := &list.Items[i]; !keep[secret.Name] {
			if err := s.client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete superseded content secret %s: %w", secret.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// RemoveCerts deletes bdName's webhook certificate Secret.
func (s *Store) RemoveCerts(ctx context.Context, bdName string) error {
	certs := &corev1.Secret{}
	certs.Namespace, certs.Name = s.cfg.SystemNamespace, certSecretName(bdName)
	if err := s.client.Delete(ctx, certs); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete webhook certificate secret: %w", err)
	}
	return nil
}
