package bdtest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best unqualified.
	. "github.com/onsi/gomega"    //nolint:revive // as does Gomega's.
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// Bundles on their own (rukpak v0.16's Bundle API, no BundleDeployment),
// and the content their contentURL serves.

// StandaloneBundle creates a Bundle of class and src that no
// BundleDeployment owns; it is deleted, and its deletion waited for, when
// the spec ends.
func StandaloneBundle(ctx context.Context, name, class string, src rukpakv1alpha1.BundleSource) {
	b := &rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: class, Source: src}}
	ExpectWithOffset(1, env.Client.Create(ctx, b)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(env.Client.Delete(ctx, b))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &rukpakv1alpha1.Bundle{}))
		}).WithContext(ctx).Should(BeTrue())
	})
}

// GetBundle reads a Bundle, for Eventually.
func GetBundle(ctx context.Context, name string) func() (rukpakv1alpha1.Bundle, error) {
	return func() (rukpakv1alpha1.Bundle, error) {
		b := rukpakv1alpha1.Bundle{}
		err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &b)
		return b, err
	}
}

// Download GETs url with token (none when empty) through c and returns the
// status code and, for a 200, the tarball's entries, sorted; otherwise the
// body.
func Download(ctx context.Context, c *http.Client, url, token string) (int, []string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return res.StatusCode, nil, strings.TrimSpace(string(body)), nil
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/gzip" {
		return res.StatusCode, nil, "", fmt.Errorf("content type %q", ct)
	}
	gz, err := gzip.NewReader(res.Body)
	if err != nil {
		return res.StatusCode, nil, "", err
	}
	tr := tar.NewReader(gz)
	var entries []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return res.StatusCode, nil, "", err
		}
		entries = append(entries, hdr.Name)
	}
	sort.Strings(entries)
	return res.StatusCode, entries, "", nil
}
