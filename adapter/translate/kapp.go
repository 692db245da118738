package translate

import (
	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// KappControllerFinalizer is the finalizer kapp-controller (v0.53.1) puts on
// an App at the start of every deploy, unless it is already there, and
// removes once `kapp delete` has removed what the App installed. Writing it
// with the App saves kapp-controller a GET and an update (and the no-op
// reconcile its own update would trigger) on every first install; what
// kapp-controller does on delete does not change.
const KappControllerFinalizer = "finalizers.kapp-ctrl.k14s.io/delete"

// kappDeployOptions are the kapp flags every App deploys with, chosen to cut
// kapp's and kapp-controller's API requests per App without dropping a
// readiness wait (kapp-controller allows each in spec.deploy[].kapp.rawOptions
// and passes them after its own defaults, so they win):
//
//   - --wait-check-interval=250ms: kapp sleeps 3 s between readiness checks
//     by default, so a Deployment that is available a quarter of a second
//     after it is applied would hold its App (and kapp-controller's status
//     ticks every 2 s) for 3 s more. kapp waits for the same conditions,
//     only checks sooner, so a workload that is ready at once does not hold
//     its App for 3 s (docs/benchmarks.md, "Cheaper Apps"). The price is reads: while a workload is
//     not ready yet, kapp reads it (and its ReplicaSets and Pods) four times
//     a second, for at most kapp-controller's -concurrency Apps at once.
//   - --app-changes-max-to-keep=0: kapp records no app-change ConfigMap per
//     deploy (a create and an update every time, and with kapp-controller's
//     default of 5 a delete once five are kept). The BundleDeployment's
//     conditions and Events say what happened instead.
//   - --logs=false: kapp neither lists Pods on every deploy nor follows the
//     logs of annotated Pods into the App status, which nobody reads here.
var kappDeployOptions = []string{
	"--wait-check-interval=250ms",
	"--app-changes-max-to-keep=0",
	"--logs=false",
}

// deployFor is the App's single kapp deploy step.
func deployFor(bd *rukpakv1alpha2.BundleDeployment) []kappctrlv1alpha1.AppDeploy {
	opts := append([]string(nil), kappDeployOptions...)
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassRegistry {
		opts = append(opts, registryDeployOptions...)
	}
	return []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{RawOptions: opts}}}
}
