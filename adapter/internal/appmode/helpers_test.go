package appmode

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

const systemNS = "rukpak-system"

var testCfg = translate.Config{SystemNamespace: systemNS, AppNamespace: systemNS, ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute}

// kinds is the discovery of the kinds the releases hold.
func kinds() meta.RESTMapper {
	apps, core, crds := schema.GroupVersion{Group: "apps", Version: "v1"}, schema.GroupVersion{Version: "v1"}, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{apps, core, crds})
	m.Add(apps.WithKind("Deployment"), meta.RESTScopeNamespace)
	m.Add(core.WithKind("Service"), meta.RESTScopeNamespace)
	m.Add(crds.WithKind("CustomResourceDefinition"), meta.RESTScopeRoot)
	return m
}

// mode is the App mode over k.
func mode(t *testing.T, k *fakekube.Cluster) *AppInstaller {
	return New(k.Client, k.Direct, store.New(k.Client, testCfg, fakekube.Offline{T: t}, nil), nil)
}

// fetchingMode is the App mode whose store fetches as the adapter does,
// from what k holds (ConfigMaps): the take-over reads the bundle as it is
// now through the store's fetcher.
func fetchingMode(k *fakekube.Cluster) *AppInstaller {
	return New(k.Client, k.Direct, store.New(k.Client, testCfg, store.SourceFetcher{Reader: k.Client, Namespace: systemNS}, nil), nil)
}

// scopeOf is one reconcile of bd with live as its App.
func scopeOf(bd *rukpakv1alpha2.BundleDeployment, live *kappctrlv1alpha1.App) *scope.Scope {
	return &scope.Scope{BD: bd, View: bd, Mode: scope.InstallWithApp, AppNS: systemNS, Cfg: testCfg, Live: live,
		Facts: &status.Facts{BD: bd, Now: time.Now()}, Now: time.Now()}
}

// bundleCM is the ConfigMap the BundleDeployment web installs from.
const bundleCM = "web-bundle"

// webBD is a plain BundleDeployment of the ConfigMap bundleCM that rukpak
// v0.24.0 installed: it carries rukpak's finalizers alongside the adapter's.
func webBD() *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-web", Generation: 1,
			Finalizers: append([]string{kube.Finalizer}, takeover.RukpakFinalizers...)},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps, ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
				{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: bundleCM}, Path: "manifests"},
			}}},
	}
}

// deployment is the bundle's one object, selecting pods labelled
// app=selects. With renderedFor, it is as rukpak's Helm post-renderer
// left it for that BundleDeployment: with its owner labels and controller
// reference.
func deployment(selects string, renderedFor *rukpakv1alpha2.BundleDeployment) string {
	meta := "  name: web\n"
	if bd := renderedFor; bd != nil {
		meta += "  labels: {core.rukpak.io/owner-kind: BundleDeployment, core.rukpak.io/owner-name: " + bd.Name + "}\n" +
			"  ownerReferences: [{apiVersion: core.rukpak.io/v1alpha2, kind: BundleDeployment, name: " + bd.Name + ", uid: " + string(bd.UID) + ", controller: true}]\n"
	}
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n" + meta + `spec:
  selector:
    matchLabels: {app: ` + selects + `}
  template:
    metadata:
      labels: {app: ` + selects + `}
    spec:
      containers: [{name: web, image: "registry.example/web:v1"}]
`
}

func bundleConfigMap(manifest string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: bundleCM}, Data: map[string]string{"deployment.yaml": manifest}}
}

// releaseSecret is revision rev of the Helm release rukpak v0.24.0 stored
// for bd: in Helm's storage format (base64 of gzipped JSON) and owned by bd.
func releaseSecret(t *testing.T, bd *rukpakv1alpha2.BundleDeployment, rev, state, manifest string) *corev1.Secret {
	t.Helper()
	release, err := json.Marshal(map[string]any{
		"name": bd.Name, "namespace": bd.Spec.InstallNamespace, "version": 1, "manifest": manifest,
		"info":  map[string]any{"status": state},
		"chart": map[string]any{"metadata": map[string]any{"name": bd.Name, "version": "0.0.0"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	if _, err := zw.Write(release); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	yes := true
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: takeover.ReleaseSecretPrefix + bd.Name + ".v" + rev,
			Labels: map[string]string{"owner": "helm", "name": bd.Name, "status": state},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: rukpakv1alpha2.GroupVersion.String(), Kind: rukpakv1alpha2.OwnerKind,
				Name: bd.Name, UID: bd.UID, Controller: &yes}}},
		Type: takeover.ReleaseSecretType,
		Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(zipped.Bytes()))},
	}
}

// read reads obj back from k, nil when it is gone.
func read[T client.Object](t *testing.T, k *fakekube.Cluster, obj T) T {
	t.Helper()
	var zero T
	if err := k.Raw.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		if client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		return zero
	}
	return obj
}

func appOf(name string) *kappctrlv1alpha1.App {
	app := &kappctrlv1alpha1.App{}
	app.Namespace, app.Name = systemNS, name
	return app
}

// deployed stores the status kapp-controller writes once it deployed the
// App's current spec (the fake client does not count generations: gen is
// the App's generation to report as deployed).
func deployed(t *testing.T, k *fakekube.Cluster, name string, gen int64) *kappctrlv1alpha1.App {
	t.Helper()
	app := read(t, k, appOf(name))
	app.Status.ObservedGeneration = gen
	app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}
	if err := k.Raw.Status().Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	return read(t, k, appOf(name))
}

// imageBD is a plain BundleDeployment kapp-controller fetches itself.
func imageBD(name string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1, Finalizers: []string{kube.Finalizer}},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/" + name + ":v1"}}},
	}
}

// installed stores bd's App as the App mode applies it, deployed by
// kapp-controller at generation 1.
func installed(t *testing.T, k *fakekube.Cluster, bd *rukpakv1alpha2.BundleDeployment) {
	t.Helper()
	app, err := translate.AppInStyle(bd, testCfg, nil, translate.StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.ApplyApp(context.Background(), k.Raw, app, nil); err != nil {
		t.Fatal(err)
	}
	bump(t, k, bd.Name, 1)
	deployed(t, k, bd.Name, 1)
}

// bump sets the App's generation, as the API server does for a spec change.
func bump(t *testing.T, k *fakekube.Cluster, name string, gen int64) {
	t.Helper()
	app := read(t, k, appOf(name))
	app.Generation = gen
	if err := k.Raw.Update(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	if got := read(t, k, appOf(name)).Generation; got != gen {
		t.Fatalf("the fake client keeps generation %d, not %d", got, gen)
	}
}

func contentSecret(bd, name string) *corev1.Secret {
	labels := translate.OwnerLabels(bd)
	labels[store.LabelContent] = "true"
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: name, Labels: labels}}
}
