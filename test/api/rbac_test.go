package api_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
	"github.com/rukpak-kapp/rukpak-kapp/test/rbacmatrix"
)

var _ = Describe("the adapter's account (config/rbac)", func() {
	It("may do what its installs need and nothing of what it must not, row by row", func(ctx context.Context) {
		user := "system:serviceaccount:" + harness.SystemNamespace + ":rukpak-kapp"
		groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + harness.SystemNamespace, "system:authenticated"}
		// A binding just applied reaches the authorizer a moment later:
		// the whole matrix is asked again until it holds (a "no" row never
		// turns into a "yes" by waiting).
		Eventually(func(ctx context.Context) []string {
			var wrong []string
			for _, a := range rbacmatrix.Adapter {
				spec := authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups}
				if a.Path != "" {
					spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Verb: a.Verb, Path: a.Path}
				} else {
					spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: a.Verb, Group: a.Group, Resource: a.Resource,
						Subresource: a.Subresource, Namespace: a.Namespace, Name: a.Name}
				}
				sar := &authorizationv1.SubjectAccessReview{Spec: spec}
				if err := env.Client.Create(ctx, sar); err != nil {
					return []string{err.Error()}
				}
				if sar.Status.Allowed != a.Allowed {
					word := map[bool]string{true: "allowed", false: "refused"}
					wrong = append(wrong, fmt.Sprintf("%s: %s, want %s (%s)", a, word[sar.Status.Allowed], word[a.Allowed], a.Why))
				}
			}
			return wrong
		}).WithContext(ctx).Should(BeEmpty())
	})
})
