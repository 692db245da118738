package contenturl

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Reviewer asks the API server about a request: whose token it carries,
// and whether that user may read what it asks for.
type Reviewer interface {
	// Authenticate says whose token this is; ok is false for a token the
	// API server does not accept.
	Authenticate(ctx context.Context, token string) (user authenticationv1.UserInfo, ok bool, err error)
	// Authorize says whether user may get path (a non-resource URL), with
	// the API server's reason when not.
	Authorize(ctx context.Context, user authenticationv1.UserInfo, path string) (allowed bool, reason string, err error)
}

// KubeReviewer asks with TokenReviews and SubjectAccessReviews, which the
// adapter's account may create (config/rbac).
type KubeReviewer struct {
	Client client.Client
}

// Authenticate reviews token with the API server's authenticators, for
// the API server's own audiences, as kube-rbac-proxy did for rukpak.
func (k KubeReviewer) Authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := k.Client.Create(ctx, tr); err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("review the token: %w", err)
	}
	return tr.Status.User, tr.Status.Authenticated, nil
}

// Authorize allows a user who may get the path: a non-resource URL, what
// rukpak's bundle-reader ClusterRole grants (get on /bundles/*), or one
// object's path named in a rule. Reading the Bundle or BundleDeployment
// object is not enough: its content may hold Secret manifests, which get
// on the object never shows.
func (k KubeReviewer) Authorize(ctx context.Context, user authenticationv1.UserInfo, path string) (bool, string, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for key, v := range user.Extra {
		extra[key] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"},
		User:                  user.Username, Groups: user.Groups, UID: user.UID, Extra: extra,
	}}
	if err := k.Client.Create(ctx, sar); err != nil {
		return false, "", fmt.Errorf("review the access: %w", err)
	}
	return sar.Status.Allowed, sar.Status.Reason, nil
}
