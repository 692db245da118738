package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// RukpakV016 is rukpak v0.16.0 (rukpak's first API, v1alpha1) run out of
// cluster against the harness with the admin kubeconfig: cmd/core (the
// plain and registry Bundle provisioners and the plain BundleDeployment
// provisioner) and cmd/helm. Its image unpacking runs in Pods, which the
// fake nodes do not run: git, http and configMaps sources unpack in the
// process.
type RukpakV016 struct {
	env        *Env
	core, helm *process
}

// The binaries test/tools builds from rukpak v0.16.0.
const (
	rukpakV016CoreBinary = "rukpak-v0.16-core"
	rukpakV016HelmBinary = "rukpak-v0.16-helm"
)

// StartRukpakV016 starts both provisioners and waits until they serve
// health probes. The cluster must serve rukpak v0.16.0's API
// (InstallRukpakV016API).
func (e *Env) StartRukpakV016(ctx context.Context) (*RukpakV016, error) {
	r := &RukpakV016{env: e}
	var err error
	// The core Deployment of rukpak v0.16.0 reported Healthy.
	if r.core, err = r.start(ctx, rukpakV016CoreBinary, "--provisioner-storage-dir", "--upload-storage-dir", "--feature-gates=BundleDeploymentHealth=true"); err != nil {
		return nil, err
	}
	if r.helm, err = r.start(ctx, rukpakV016HelmBinary, "--storage-dir", ""); err != nil {
		r.core.Stop(5 * time.Second)
		return nil, err
	}
	return r, nil
}

func (r *RukpakV016) start(ctx context.Context, name, storageFlag, uploadFlag string, extra ...string) (*process, error) {
	return r.env.startRukpakProcess(ctx, name, "v0.16.0", []string{"storage", "uploads"}, func(dir, addr, probe string) []string {
		args := []string{"--kubeconfig", r.env.ControlPlane.Kubeconfig,
			"--system-namespace", SystemNamespace,
			storageFlag, filepath.Join(dir, "storage"),
			"--http-bind-address", addr, "--http-external-address", "http://" + addr,
			"--health-probe-bind-address", probe}
		if uploadFlag != "" {
			args = append(args, uploadFlag, filepath.Join(dir, "uploads"))
		}
		return append(args, extra...)
	})
}

// Stop ends rukpak v0.16.0 gracefully.
func (r *RukpakV016) Stop() {
	r.core.Stop(10 * time.Second)
	r.helm.Stop(10 * time.Second)
}

// InstallRukpakV016API makes the cluster serve rukpak v0.16.0's API as
// rukpak v0.16.0 installed it: its Bundle and BundleDeployment CRDs
// (test/testdata/rukpak-v0.16.0), v1alpha1 only, BundleDeployments stored
// as v1alpha1. No BundleDeployment may exist: v1alpha2 goes. InstallAPI
// then does what applying rukpak-kapp's manifests over rukpak v0.16 does.
func (e *Env) InstallRukpakV016API(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(e.Root, "test", "testdata", "rukpak-v0.16.0", "crds.yaml"))
	if err != nil {
		return err
	}
	objs, err := DecodeYAML(data)
	if err != nil {
		return err
	}
	for _, u := range objs {
		want := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, want); err != nil {
			return fmt.Errorf("read rukpak v0.16.0's CRD %s: %w", u.GetName(), err)
		}
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: want.Name}, live); err != nil {
			return fmt.Errorf("read CRD %s: %w", want.Name, err)
		}
		// The API server lets a version go only once no object may be
		// stored in it: store v1alpha1 first, then say only v1alpha1 is
		// stored (true while no BundleDeployment exists).
		for i := range live.Spec.Versions {
			live.Spec.Versions[i].Storage = live.Spec.Versions[i].Name == "v1alpha1"
		}
		live.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		if err := e.Client.Update(ctx, live); err != nil {
			return fmt.Errorf("store CRD %s as v1alpha1: %w", want.Name, err)
		}
		live.Status.StoredVersions = []string{"v1alpha1"}
		if err := e.Client.Status().Update(ctx, live); err != nil {
			return fmt.Errorf("record CRD %s as stored at v1alpha1: %w", want.Name, err)
		}
		live.Spec = want.Spec
		live.Labels, live.Annotations = want.Labels, want.Annotations
		if err := e.Client.Update(ctx, live); err != nil {
			return fmt.Errorf("install rukpak v0.16.0's CRD %s: %w", want.Name, err)
		}
	}
	if err := WaitForCRDs(ctx, e.Client, objs); err != nil {
		return err
	}
	// Served and stored as rukpak v0.16.0 did once v1alpha2 is gone.
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := e.Client.List(ctx, &rukpakv1alpha2.BundleDeploymentList{})
		return apierrors.IsNotFound(err) || meta.IsNoMatchError(err), nil
	})
}

// InstallAPI applies rukpak-kapp's manifests again (config/crd and the
// rest of installAPI), as upgrading a cluster to rukpak-kapp does.
func (e *Env) InstallAPI(ctx context.Context) error { return e.installAPI(ctx, true) }
