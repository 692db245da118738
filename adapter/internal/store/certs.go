package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

// certStore keeps a BundleDeployment's webhook CA and serving certificates
// in one Secret in the system namespace, owned by the BD. Reusing them makes
// the converted content byte-stable, so kapp has nothing to change between
// reconciles; they are replaced only when close to expiry.
type certStore struct {
	bd     *rukpakv1alpha2.BundleDeployment
	secret *corev1.Secret
	now    time.Time

	mu      sync.Mutex
	changed bool
	// renewAt is when the first certificate handed out needs renewing.
	renewAt time.Time
}

func certSecretName(bd string) string { return bd + "-webhook-certs" }

// loadCertStore reads the BD's certificate Secret; a missing one starts empty.
func loadCertStore(ctx context.Context, c client.Reader, namespace string, bd *rukpakv1alpha2.BundleDeployment, now time.Time) (*certStore, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: certSecretName(bd.Name)}, secret)
	switch {
	case apierrors.IsNotFound(err):
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Name: certSecretName(bd.Name), Namespace: namespace,
			Labels: translate.OwnerLabels(bd.Name), OwnerReferences: translate.OwnerReferences(bd),
		}}
	case err != nil:
		return nil, fmt.Errorf("get webhook certificate secret: %w", err)
	default:
		secret = secret.DeepCopy()
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	return &certStore{bd: bd, secret: secret, now: now}, nil
}

// source hands out stored certificates, issuing what is missing or due.
func (s *certStore) source() convert.CertSource {
	return func(service, namespace string) (convert.ServingCert, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		ca := certs.Pair{CertPEM: s.secret.Data["ca.crt"], KeyPEM: s.secret.Data["ca.key"]}
		if !certs.Fresh(ca, s.now) {
			var err error
			if ca, err = certs.NewCA("rukpak-kapp webhook CA for "+s.bd.Name, s.now); err != nil {
				return convert.ServingCert{}, err
			}
			s.secret.Data = map[string][]byte{"ca.crt": ca.CertPEM, "ca.key": ca.KeyPEM}
			s.changed = true
		}
		prefix := namespace + "." + service
		serving := certs.Pair{CertPEM: s.secret.Data[prefix+".crt"], KeyPEM: s.secret.Data[prefix+".key"]}
		if !certs.Fresh(serving, s.now) || !certs.Signs(ca, serving) {
			var err error
			if serving, err = certs.Issue(ca, service, namespace, s.now); err != nil {
				return convert.ServingCert{}, err
			}
			s.secret.Data[prefix+".crt"], s.secret.Data[prefix+".key"] = serving.CertPEM, serving.KeyPEM
			s.changed = true
		}
		for _, p := range []certs.Pair{ca, serving} {
			if at, ok := certs.RenewAt(p); ok && (s.renewAt.IsZero() || at.Before(s.renewAt)) {
				s.renewAt = at
			}
		}
		return convert.ServingCert{Serving: serving, CABundle: ca.CertPEM}, nil
	}
}

// save writes the Secret when a certificate was issued.
func (s *certStore) save(ctx context.Context, c client.Client) error {
	if !s.changed {
		return nil
	}
	if s.secret.ResourceVersion == "" {
		if err := c.Create(ctx, s.secret, client.FieldOwner(fieldowner.Name)); err != nil {
			return fmt.Errorf("create webhook certificate secret: %w", err)
		}
		return nil
	}
	if err := c.Update(ctx, s.secret, client.FieldOwner(fieldowner.Name)); err != nil {
		return fmt.Errorf("update webhook certificate secret: %w", err)
	}
	return nil
}

// storedRenewAt is when the first certificate in bd's stored certificate
// Secret is due; zero when there is none (a bundle without webhooks).
func storedRenewAt(ctx context.Context, c client.Reader, namespace string, bd *rukpakv1alpha2.BundleDeployment) (time.Time, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: certSecretName(bd.Name)}, secret)
	if apierrors.IsNotFound(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("get webhook certificate secret: %w", err)
	}
	var first time.Time
	for k, v := range secret.Data {
		if !strings.HasSuffix(k, ".crt") {
			continue
		}
		pair := certs.Pair{CertPEM: v, KeyPEM: secret.Data[strings.TrimSuffix(k, ".crt")+".key"]}
		if at, ok := certs.RenewAt(pair); ok && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first, nil
}
