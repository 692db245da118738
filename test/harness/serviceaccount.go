package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount ns/name with a fresh token, as a pod of it would.
func (e *Env) ServiceAccountKubeconfig(ctx context.Context, ns, name string) (string, error) {
	expiry := int64(24 * 60 * 60)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := e.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("request token for %s/%s: %w", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: e.ControlPlane.Config.Host, CertificateAuthorityData: e.ControlPlane.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = "local"
	path := filepath.Join(e.Dir, fmt.Sprintf("%s-%s.kubeconfig", ns, name))
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return path, nil
}

// ClusterAdminAccount makes the ServiceAccount ns/name and binds it to
// cluster-admin: for stand-ins of components that run with broad rights.
func (e *Env) ClusterAdminAccount(ctx context.Context, ns, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := e.Client.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create service account %s/%s: %w", ns, name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if err := e.Client.Create(ctx, binding); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("bind %s/%s to cluster-admin: %w", ns, name, err)
	}
	return nil
}

// AccountToken makes the ServiceAccount ns/name, bound to the ClusterRole
// role unless role is empty, and returns a fresh token of it, as a pod of
// it would hold.
func (e *Env) AccountToken(ctx context.Context, ns, name, role string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := e.Client.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
		return "", fmt.Errorf("create service account %s/%s: %w", ns, name, err)
	}
	if role != "" {
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name + "-" + role},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}
		if err := e.Client.Create(ctx, binding); client.IgnoreAlreadyExists(err) != nil {
			return "", fmt.Errorf("bind %s/%s to %s: %w", ns, name, role, err)
		}
		if err := e.waitBound(ctx, ns, name, role); err != nil {
			return "", err
		}
	}
	expiry := int64(60 * 60)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}
	if err := e.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("request token for %s/%s: %w", ns, name, err)
	}
	return tr.Status.Token, nil
}

// waitBound waits until kube-apiserver's authorizer grants the
// ServiceAccount ns/name what the first rule of the ClusterRole role
// allows: a new binding reaches the authorizer's cache a moment after it
// is stored, and a request made in between is refused.
func (e *Env) waitBound(ctx context.Context, ns, name, role string) error {
	cr := &rbacv1.ClusterRole{}
	if err := e.Client.Get(ctx, client.ObjectKey{Name: role}, cr); err != nil {
		return fmt.Errorf("read ClusterRole %s: %w", role, err)
	}
	if len(cr.Rules) == 0 || len(cr.Rules[0].Verbs) == 0 {
		return nil
	}
	rule := cr.Rules[0]
	spec := authorizationv1.SubjectAccessReviewSpec{User: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	switch {
	case len(rule.NonResourceURLs) > 0:
		path := rule.NonResourceURLs[0]
		if prefix, ok := strings.CutSuffix(path, "*"); ok {
			path = prefix + "x"
		}
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Verb: rule.Verbs[0], Path: path}
	case len(rule.Resources) > 0 && len(rule.APIGroups) > 0:
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: rule.Resources[0]}
		if len(rule.ResourceNames) > 0 {
			spec.ResourceAttributes.Name = rule.ResourceNames[0]
		}
	default:
		return nil
	}
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: spec}
		if err := e.Client.Create(ctx, sar); err != nil {
			return false, fmt.Errorf("ask whether %s/%s is bound to %s: %w", ns, name, role, err)
		}
		return sar.Status.Allowed, nil
	})
}
