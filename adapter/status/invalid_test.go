package status

import (
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestInvalidContent(t *testing.T) {
	t.Parallel()
	const noManifests = "ytt: Error: Checking file '<tmp>/manifests': lstat <tmp>/manifests: no such file or directory"
	for _, tc := range []struct {
		name  string
		class string
		f     Facts
		want  string
	}{
		{name: "the adapter found the content invalid", class: rukpakv1alpha2.ClassRegistry,
			f:    Facts{BD: newBD(nil), Failure: &Failure{Kind: BundleInvalid, Message: "convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled"}},
			want: "invalid bundle: convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled"},
		{name: "another failure of the adapter's is not the content's", class: rukpakv1alpha2.ClassHelm,
			f: Facts{BD: newBD(nil), Failure: &Failure{Kind: SourceFailed, Message: "GET x: 404"}}},
		{name: "a plain bundle kapp-controller could not template", class: rukpakv1alpha2.ClassPlain,
			f:    Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, noManifests))},
			want: explainTemplate(Message(noManifests))},
		{name: "a chart that does not render fails its install, not its unpack", class: rukpakv1alpha2.ClassHelm,
			f: Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateFailed(3, "helm: parse error"))}},
		{name: "an empty source", class: rukpakv1alpha2.ClassPlain,
			f:    Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(1, 2, "Expected to find at least one file within directory"))},
			want: "invalid bundle: " + zeroObjects},
		{name: "a source that cannot be fetched is not invalid content", class: rukpakv1alpha2.ClassPlain,
			f: Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchFailed(1, 2, "unauthorized"))}},
		{name: "nothing to deploy", class: rukpakv1alpha2.ClassPlain,
			f:    Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateDone(3), deployFailed(4, "kapp: Error: Trying to apply empty set of resources"))},
			want: "invalid bundle: " + zeroObjects},
		{name: "a deploy failure is the install's", class: rukpakv1alpha2.ClassPlain,
			f: Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), templateDone(3), deployFailed(4, "no matches for kind"))}},
		{name: "an App made from an older generation says nothing of this one", class: rukpakv1alpha2.ClassPlain,
			f: Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileFailed, madeFor(1), fetchOK(1, 2), templateFailed(3, noManifests))}},
		{name: "a succeeded App", class: rukpakv1alpha2.ClassPlain,
			f: Facts{BD: newBD(nil), App: newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := InvalidContent(tc.f, tc.class); got != tc.want {
				t.Fatalf("InvalidContent = %q, want %q", got, tc.want)
			}
		})
	}
}
