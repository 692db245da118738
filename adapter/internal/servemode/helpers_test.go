package servemode

import (
	"context"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

const (
	systemNS = "rukpak-system"
	appNS    = "apps-0"
)

// Apps spread over one app namespace, so the serve mode mirrors what the
// App references there.
var modeCfg = translate.Config{SystemNamespace: systemNS, AppNamespaces: []string{appNS}, AppNamespace: appNS,
	ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute}

// appModeInstalled is servedBD, installed by the App mode so far, and
// the serve mode over its cluster.
func appModeInstalled(t *testing.T) (*fakekube.Cluster, *PackageInstaller, *rukpakv1alpha2.BundleDeployment) {
	t.Helper()
	bd := servedBD()
	k := fakekube.New(nil, bd.DeepCopy(), pullSecret.DeepCopy())
	app, err := translate.AppInStyle(bd, modeCfg, nil, translate.StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.ApplyApp(context.Background(), k.Raw, app, nil); err != nil {
		t.Fatal(err)
	}
	return k, New(k.Client, k.Direct, store.New(k.Client, modeCfg, fakekube.Offline{T: t}, nil)), bd
}

// servedBD is a plain bundle from an image with a pull Secret, served at
// version 1.0.0.
func servedBD() *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-web", Generation: 1, Finalizers: []string{kube.Finalizer},
			Annotations: map[string]string{rukpakv1alpha2.AnnotationInstallWith: string(scope.InstallWithPackageInstall),
				rukpakv1alpha2.AnnotationPackageVersion: "1.0.0"}},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage,
				Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/web:v1", ImagePullSecretName: "pull"}}},
	}
}

var pullSecret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "pull"},
	Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}

// scopeOf is one reconcile of bd in the serve mode, with its App read as
// the BundleDeployment reconciler reads it.
func scopeOf(t *testing.T, k *fakekube.Cluster, bd *rukpakv1alpha2.BundleDeployment) *scope.Scope {
	t.Helper()
	live, err := kube.LiveApp(context.Background(), k.Raw, k.Raw, client.ObjectKey{Namespace: appNS, Name: bd.Name})
	if err != nil {
		t.Fatal(err)
	}
	return &scope.Scope{BD: bd, View: bd, Mode: scope.InstallWithPackageInstall, AppNS: appNS, Cfg: modeCfg, Live: live,
		Facts: &status.Facts{BD: bd, Now: time.Now()}, Now: time.Now()}
}

// piFinalizer is kapp-controller's: it holds a PackageInstall through a
// delete until kapp-controller is done with it.
const piFinalizer = "finalizers.packageinstall.packaging.carvel.dev/delete"

// finish removes the finalizers of obj, as its controller does when it is done.
func finish(t *testing.T, k *fakekube.Cluster, obj client.Object) {
	t.Helper()
	if err := k.Raw.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	obj.SetFinalizers(nil)
	if err := k.Raw.Update(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// deployedAs stores what kapp-controller reports once the PackageInstall's
// App deployed version.
func deployedAs(t *testing.T, k *fakekube.Cluster, name, version string) {
	t.Helper()
	ctx := context.Background()
	app := &kappctrlv1alpha1.App{}
	if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: appNS, Name: name}, app); err != nil {
		t.Fatal(err)
	}
	app.Annotations[status.AnnotationAppPackageVersion] = version
	if err := k.Raw.Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	succeeded := []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}
	app.Status.Conditions = succeeded
	if err := k.Raw.Status().Update(ctx, app); err != nil {
		t.Fatal(err)
	}
	pi := &packagingv1alpha1.PackageInstall{}
	if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: appNS, Name: name}, pi); err != nil {
		t.Fatal(err)
	}
	pi.Status.Conditions = succeeded
	if err := k.Raw.Status().Update(ctx, pi); err != nil {
		t.Fatal(err)
	}
}
