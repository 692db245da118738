package bdtest

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best unqualified.
	. "github.com/onsi/gomega"    //nolint:revive // as does Gomega's.
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var env *harness.Env

// Use makes the builders create objects in e's cluster and content on its
// servers.
func Use(e *harness.Env) { env = e }

// Testdata is a path under test/testdata.
func Testdata(parts ...string) string {
	return filepath.Join(append([]string{env.Root, "test", "testdata"}, parts...)...)
}

// PlainBD is a plain BundleDeployment of an image into the default
// namespace. It is deleted, and its deletion waited for, when the spec ends.
func PlainBD(ctx context.Context, name, ref string, mutate ...func(*rukpakv1alpha2.BundleDeployment)) *rukpakv1alpha2.BundleDeployment {
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
	DeferCleanup(DeleteAndWait, bd.Name)
	return bd
}

// HelmBD is a helm BundleDeployment into the default namespace.
func HelmBD(ctx context.Context, name string, src rukpakv1alpha2.BundleSource, mutate ...func(*rukpakv1alpha2.BundleDeployment)) {
	PlainBD(ctx, name, "", append([]func(*rukpakv1alpha2.BundleDeployment){func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.ProvisionerClassName = rukpakv1alpha2.ClassHelm
		bd.Spec.Source = src
	}}, mutate...)...)
}

// RegistryBD is a registry+v1 BundleDeployment of an image into a fresh
// namespace ns.
func RegistryBD(ctx context.Context, name, ref, ns string, mutate ...func(*rukpakv1alpha2.BundleDeployment)) {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	Expect(env.Client.Create(ctx, namespace)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, namespace) })
	PlainBD(ctx, name, ref, append([]func(*rukpakv1alpha2.BundleDeployment){func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.ProvisionerClassName = rukpakv1alpha2.ClassRegistry
		bd.Spec.InstallNamespace = ns
	}}, mutate...)...)
}

// HTTPBD is a plain BundleDeployment of a tarball, with basic auth from
// the Secret named secret when it is not empty.
func HTTPBD(ctx context.Context, name, url, secret string) {
	PlainBD(ctx, name, "", func(bd *rukpakv1alpha2.BundleDeployment) {
		h := &rukpakv1alpha2.HTTPSource{URL: url}
		h.Auth.Secret.Name = secret
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: h}
	})
}

// GitBD is a plain BundleDeployment of a git source.
func GitBD(ctx context.Context, name string, g rukpakv1alpha2.GitSource, mutate ...func(*rukpakv1alpha2.BundleDeployment)) {
	PlainBD(ctx, name, "", append([]func(*rukpakv1alpha2.BundleDeployment){func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit, Git: &g}
	}}, mutate...)...)
}

// ConfigMapsBD is a plain BundleDeployment of ConfigMaps, each holding
// files of manifests/.
func ConfigMapsBD(ctx context.Context, name string, cms ...string) {
	var src []rukpakv1alpha2.ConfigMapSource
	for _, cm := range cms {
		src = append(src, rukpakv1alpha2.ConfigMapSource{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: cm}, Path: "manifests"})
	}
	PlainBD(ctx, name, "", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps, ConfigMaps: src}
	})
}

// ConfigMapFrom creates an immutable ConfigMap in the system namespace with
// every file under dirs, deleted when the spec ends.
func ConfigMapFrom(ctx context.Context, name string, dirs ...string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace}, Data: map[string]string{}}
	for _, dir := range dirs {
		Expect(filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			cm.Data[d.Name()] = string(data)
			return err
		})).To(Succeed())
	}
	immutable := true
	cm.Immutable = &immutable
	Expect(env.Client.Create(ctx, cm)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, cm) })
}

// DeleteAndWait deletes a BundleDeployment and waits until it is gone.
func DeleteAndWait(ctx context.Context, name string) {
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, bd))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), bd))
	}).WithContext(ctx).Should(BeTrue(), "BundleDeployment %s was not deleted", name)
}

// GetBD reads a BundleDeployment, for Eventually.
func GetBD(ctx context.Context, name string) func() (*rukpakv1alpha2.BundleDeployment, error) {
	return func() (*rukpakv1alpha2.BundleDeployment, error) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		return bd, env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)
	}
}

// MustBD reads a BundleDeployment that must exist.
func MustBD(ctx context.Context, name string) *rukpakv1alpha2.BundleDeployment {
	bd, err := GetBD(ctx, name)()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return bd
}

// HaveCondition matches a BundleDeployment whose condition t has the
// status, the reason and a message containing msg, for its current
// generation.
func HaveCondition(t string, status metav1.ConditionStatus, reason, msg string) types.GomegaMatcher {
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

// GetApp reads the App of a BundleDeployment.
func GetApp(ctx context.Context, name string) (*kappctrlv1alpha1.App, error) {
	app := &kappctrlv1alpha1.App{}
	return app, env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)
}

// RandSuffix keeps names unique across specs that share a server.
func RandSuffix() string { return rand.String(5) }

// BasicAuthSecret creates a Secret in the system namespace in rukpak's
// basic-auth layout (username, password), deleted when the spec ends.
func BasicAuthSecret(ctx context.Context, name, username, password string) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace},
		Data:       map[string][]byte{"username": []byte(username), "password": []byte(password)},
	}
	ExpectWithOffset(1, env.Client.Create(ctx, secret)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, secret) })
}

// DirBundle writes files into a fresh directory and pushes it as an image.
func DirBundle(tag string, files map[string]string) string {
	dir := GinkgoT().TempDir()
	for p, data := range files {
		full := filepath.Join(dir, p)
		Expect(os.MkdirAll(filepath.Dir(full), 0o755)).To(Succeed())
		Expect(os.WriteFile(full, []byte(data), 0o644)).To(Succeed())
	}
	ref, _, err := env.Registry.PushDir(dir, "corpus/"+tag+":v1")
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// HostileImage pushes rukpak's registry/valid bundle with entries that
// hostile writes after it.
func HostileImage(repoTag string, hostile func(tw *tar.Writer)) string {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	root := Testdata("rukpak-bundles", "registry", "valid")
	Expect(filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})).To(Succeed())
	hostile(tw)
	_ = tw.Flush()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	Expect(err).NotTo(HaveOccurred())
	img, err := mutate.AppendLayers(empty.Image, layer)
	Expect(err).NotTo(HaveOccurred())
	ref, _, err := env.Registry.PushImage(img, repoTag)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// BundleWith pushes a copy of the test bundle under test/testdata/parts
// with extra files added or replaced, and returns its reference.
func BundleWith(tag string, extra map[string]string, parts ...string) string {
	dir := GinkgoT().TempDir()
	Expect(os.CopyFS(dir, os.DirFS(Testdata(parts...)))).To(Succeed())
	for p, data := range extra {
		full := filepath.Join(dir, p)
		Expect(os.MkdirAll(filepath.Dir(full), 0o755)).To(Succeed())
		Expect(os.WriteFile(full, []byte(data), 0o644)).To(Succeed())
	}
	ref, _, err := env.Registry.PushDir(dir, tag)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// EventNotes are the notes of the Events recorded about the
// BundleDeployment name. It returns a List error instead of failing, so
// an Eventually polling it tries again.
func EventNotes(ctx context.Context, name string) ([]string, error) {
	list := &eventsv1.EventList{}
	if err := env.Client.List(ctx, list); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == rukpakv1alpha2.OwnerKind && e.Regarding.Name == name {
			out = append(out, e.Note)
		}
	}
	return out, nil
}
