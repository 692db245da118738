package store

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
	"github.com/rukpak-kapp/rukpak-kapp/test/tarball"
)

func TestSourceFetcherConfigMaps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := fakekube.New(nil,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "manifests"}, Data: map[string]string{"cm.yaml": "kind: ConfigMap\n"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "deep"}, BinaryData: map[string][]byte{"logo.png": {0x89, 'P'}}},
		// The same name elsewhere: never read.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "elsewhere"}, Data: map[string]string{"x.yaml": "x"}},
	)
	f := SourceFetcher{Reader: k.Client, Namespace: systemNS}
	bd := bdOf("cm", rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps, ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
		{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "manifests"}, Path: "manifests"},
		{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "deep"}, Path: "docs/img"},
	}})
	files, resolved, err := f.Fetch(ctx, bd)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"manifests/": "", "manifests/cm.yaml": "kind: ConfigMap\n", "docs/": "", "docs/img/": "", "docs/img/logo.png": "\x89P"} {
		if got, ok := files[name]; !ok || string(got) != want {
			t.Errorf("file %s = %q (%t), want %q", name, got, ok, want)
		}
	}
	if len(files) != 5 || resolved.Type != rukpakv1alpha2.SourceTypeConfigMaps {
		t.Errorf("files %v, resolved %+v", files, resolved)
	}

	bd.Spec.Source.ConfigMaps = []rukpakv1alpha2.ConfigMapSource{{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "elsewhere"}}}
	_, _, err = f.Fetch(ctx, bd)
	var step *scope.StepError
	if !errors.As(err, &step) || step.Step != scope.StepSource || !strings.Contains(err.Error(), systemNS+"/elsewhere") {
		t.Fatalf("a ConfigMap outside the system namespace: %v, want the source's error naming %s/elsewhere", err, systemNS)
	}
}

func TestSourceFetcherHTTPWithItsAuthSecret(t *testing.T) {
	t.Parallel()
	body := tarball.Of(t, map[string]string{"manifests/cm.yaml": "kind: ConfigMap\n"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "reader" || p != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	k := fakekube.New(nil,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "web-auth"}, Data: map[string][]byte{"username": []byte("reader"), "password": []byte("s3cret")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "apps-auth"}, Data: map[string][]byte{"username": []byte("reader"), "password": []byte("s3cret")}},
	)
	f := SourceFetcher{Reader: k.Client, Namespace: systemNS}
	bdWith := func(secret string) *rukpakv1alpha2.BundleDeployment {
		return bdOf("web", rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP,
			HTTP: &rukpakv1alpha2.HTTPSource{URL: srv.URL + "/web.tgz", Auth: rukpakv1alpha2.Authorization{Secret: rukpakv1alpha2.LocalObjectReference{Name: secret}}}})
	}
	files, resolved, err := f.Fetch(context.Background(), bdWith("web-auth"))
	if err != nil || string(files["manifests/cm.yaml"]) != "kind: ConfigMap\n" || resolved.HTTP.URL != srv.URL+"/web.tgz" {
		t.Fatalf("Fetch: %v, files %v, resolved %+v", err, files, resolved)
	}
	// A Secret of another namespace is not read: the fetch fails, naming
	// the Secret it looked for.
	if _, _, err := f.Fetch(context.Background(), bdWith("apps-auth")); err == nil || !strings.Contains(err.Error(), "auth secret "+systemNS+"/apps-auth") {
		t.Fatalf("a Secret outside the system namespace: %v", err)
	}
	// Without the Secret the server refuses, in rukpak's words.
	if _, _, err := f.Fetch(context.Background(), bdWith("")); err == nil || !strings.Contains(err.Error(), `unexpected status "401 Unauthorized"`) {
		t.Fatalf("no credentials: %v", err)
	}
}

func TestSourceFetcherRefusesASourceWithoutItsField(t *testing.T) {
	t.Parallel()
	f := SourceFetcher{Reader: fakekube.New(nil).Client, Namespace: systemNS}
	bd := bdOf("web", rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit})
	_, _, err := f.Fetch(context.Background(), bd)
	if !errors.Is(err, fetch.ErrInvalidContent) || !scope.Permanent(err) {
		t.Fatalf("a git source without spec.source.git: %v, want a permanent invalid-content error", err)
	}
}
