package kube

import (
	"context"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

const (
	systemNS = "rukpak-system"
	appNS    = "apps-0"
)

var testCfg = translate.Config{SystemNamespace: systemNS, AppNamespace: appNS, AppNamespaces: []string{appNS},
	ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute}

// imageBD is a plain bundle kapp-controller fetches from an image, with
// mutations applied.
func imageBD(name string, mutate ...func(*rukpakv1alpha2.BundleDeployment)) *rukpakv1alpha2.BundleDeployment {
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: 1},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/" + name + ":v1"}}},
	}
	for _, m := range mutate {
		m(bd)
	}
	return bd
}

// desiredApp is the App the App mode writes for bd.
func desiredApp(t *testing.T, bd *rukpakv1alpha2.BundleDeployment) *kappctrlv1alpha1.App {
	t.Helper()
	app, err := translate.AppInStyle(bd, testCfg, nil, translate.StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// get reads obj back from the fake cluster.
func get(t *testing.T, k *fakekube.Cluster, obj client.Object) {
	t.Helper()
	if err := k.Raw.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}
