package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// The files of a catalog Package's inline fetch. ytt renders them with the
// PackageInstall's values (kapp-controller adds its values Secrets to the
// first ytt step) and two values from the App itself (downward API): the
// App's name and namespace, which are the PackageInstall's.
const (
	schemaFile           = "values-schema.yml"
	bundleDeploymentFile = "bundledeployment.yml"
	kappConfigFile       = "kapp-config.yml"
)

// Install is what a catalog Package installs.
type Install struct {
	Entry Entry
	// Image is the bundle's image reference, as the catalog names it.
	Image string
	// InstallNamespace is the default install namespace: the CSV's
	// suggested namespace, else the package name.
	InstallNamespace string
	// Class is the provisioner class: registry+v1, or plain for a plain+v0
	// bundle.
	Class string
}

// AppTemplate is the App spec of the Package that installs in: ytt makes
// one BundleDeployment of class core-rukpak-io-registry (and, unless the
// values say otherwise, its install namespace), and kapp deploys it and
// waits until the adapter reports the generation installed.
func AppTemplate(in Install) *kappctrlv1alpha1.AppSpec {
	return &kappctrlv1alpha1.AppSpec{
		Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{
			schemaFile:           valuesSchemaYtt(in),
			bundleDeploymentFile: bundleDeploymentYtt(in),
			kappConfigFile:       kappConfig,
		}}}},
		Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{DownwardAPI: &kappctrlv1alpha1.AppTemplateValuesDownwardAPI{
				Items: []kappctrlv1alpha1.AppTemplateValuesDownwardAPIItem{
					{Name: "app.name", FieldPath: "metadata.name"},
					{Name: "app.namespace", FieldPath: "metadata.namespace"},
				},
			}}},
		}}},
		Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
	}
}

// quote makes s a YAML scalar (a JSON string is one).
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// valuesSchemaYtt declares the values ytt accepts, with their defaults:
// the same values as the Package's OpenAPI schema (values), which says
// the same to kctrl.
func valuesSchemaYtt(in Install) string {
	var b strings.Builder
	b.WriteString(`#@data/values-schema
---
#! The PackageInstall's name and namespace (downward API), not for users.
app:
  name: ""
  namespace: ""
`)
	// Every value, a plain bundle's too: a plain bundle's install has always
	// accepted (and ignored) watchNamespaces, and an install that passes it
	// must keep rendering.
	for _, v := range values(in.InstallNamespace, nil, false) {
		switch d := v.def.(type) {
		case string:
			fmt.Fprintf(&b, "%s: %s\n", v.name, quote(d))
		case bool:
			fmt.Fprintf(&b, "%s: %t\n", v.name, d)
		case []string:
			// A ytt schema's list names its items' type by one item; its
			// default is empty.
			fmt.Fprintf(&b, "%s:\n- \"\"\n", v.name)
		}
	}
	return b.String()
}

// bundleDeploymentYtt is the BundleDeployment, named after the
// PackageInstall (<name>.<namespace>: a BundleDeployment is cluster-scoped)
// unless the values name it.
func bundleDeploymentYtt(in Install) string {
	var b strings.Builder
	b.WriteString(`#@ load("@ytt:data", "data")
#@ load("@ytt:assert", "assert")
#@ v = data.values
#@ name = v.bundleDeploymentName or "{}.{}".format(v.app.name, v.app.namespace)
#@ if v.upgradeConstraintPolicy not in ["` + PolicyCatalogProvided + `", "` + PolicySelfCertified + `"]:
#@   assert.fail("upgradeConstraintPolicy must be ` + PolicyCatalogProvided + ` or ` + PolicySelfCertified + `, not " + v.upgradeConstraintPolicy)
#@ end
#@ if v.upgradeApproval not in ["` + ApprovalAutomatic + `", "` + ApprovalManual + `"]:
#@   assert.fail("upgradeApproval must be ` + ApprovalAutomatic + ` or ` + ApprovalManual + `, not " + v.upgradeApproval)
#@ end
#@ if v.createNamespace:
---
apiVersion: v1
kind: Namespace
metadata:
  name: #@ v.installNamespace
  annotations:
    #! An existing namespace is taken as it is; uninstalling keeps it and
    #! whatever else lives in it.
    kapp.k14s.io/create-strategy: fallback-on-update
    kapp.k14s.io/delete-strategy: orphan
#@ end
---
apiVersion: ` + rukpakv1alpha2.GroupVersion.String() + `
kind: BundleDeployment
metadata:
  name: #@ name
  labels:
    ` + LabelPackage + `: ` + quote(in.Entry.Package) + `
  annotations:
`)
	ann := in.Entry.Annotations()
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		fmt.Fprintf(&b, "    %s: %s\n", k, quote(ann[k]))
	}
	// The catalog's PackageInstall is already the Carvel view of this
	// install; served as a Package of its own it would show twice in kctrl.
	b.WriteString(`    ` + rukpakv1alpha2.AnnotationInstallWith + `: app
    ` + AnnotationPackagesNS + `: #@ v.app.namespace
    ` + AnnotationInstall + `: #@ v.app.name
    ` + AnnotationUpgradeEdge + `: #@ v.upgradeConstraintPolicy
    ` + AnnotationInstallDependencies + `: #@ "true" if v.installDependencies else "false"
    ` + AnnotationUpgradeApproval + `: #@ v.upgradeApproval
    ` + AnnotationApprovedVersion + `: #@ v.approvedVersion
    ` + rukpakv1alpha2.AnnotationHealthExpressions + `: #@ v.healthExpressions
spec:
  provisionerClassName: ` + in.Class + `
  installNamespace: #@ v.installNamespace
  source:
    type: image
    image:
      ref: ` + quote(in.Image) + `
`)
	if in.Class == rukpakv1alpha2.ClassRegistry {
		b.WriteString(`  #@ if len(v.watchNamespaces) > 0:
  config:
    watchNamespaces: #@ v.watchNamespaces
  #@ end
`)
	}
	return b.String()
}

// kappConfig makes kapp wait for the adapter, judging the
// BundleDeployment's conditions at its generation (kapp's ytt wait rule,
// since a held install's approval arrives as annotations, which keep the
// generation): the deploy fails with the adapter's message when the
// generation is not installed (kapp-controller retries with backoff), and
// succeeds once it is Installed, or Held (the version asked for waits for
// approval, or was retracted, and the version installed runs: no
// failure). A hold for approval counts only while the annotations kapp
// applied still hold the move (upgradeApproval Manual, no approval of the
// version asked for): a Held said before an approval arrived is not taken
// for the approved version's outcome.
const kappConfig = `apiVersion: kapp.k14s.io/v1alpha1
kind: Config
waitRules:
- resourceMatchers:
  - apiVersionKindMatcher: {apiVersion: ` + "core.rukpak.io/v1alpha2" + `, kind: BundleDeployment}
  ytt:
    funcContractV1:
      resource.star: |
        load("@ytt:struct", "struct")

        def covered(ann):
          if ann.get("` + AnnotationUpgradeApproval + `") != "` + ApprovalManual + `":
            return True
          end
          approved = ann.get("` + AnnotationApprovedVersion + `", "")
          version = ann.get("` + AnnotationVersion + `", "")
          return approved != "" and (approved == version or approved == version.split("+")[0])
        end

        def is_done(resource):
          bd = struct.decode(resource)
          gen = bd["metadata"].get("generation")
          ann = bd["metadata"].get("annotations") or {}
          now = {}
          for c in (bd.get("status") or {}).get("conditions") or []:
            if c.get("observedGeneration") == gen:
              now[c.get("type")] = c
            end
          end
          installed = now.get("` + rukpakv1alpha2.TypeInstalled + `")
          if installed and installed.get("status") == "False":
            return {"done": True, "successful": False, "message": "Installed is False: " + installed.get("reason", "") + " (message: " + installed.get("message", "") + ")"}
          end
          if installed and installed.get("status") == "True":
            return {"done": True, "successful": True, "message": "Installed: " + installed.get("message", "")}
          end
          held = now.get("` + rukpakv1alpha2.TypeHeld + `")
          if held and held.get("status") == "True" and (held.get("reason") != "` + rukpakv1alpha2.ReasonAwaitingApproval + `" or not covered(ann)):
            return {"done": True, "successful": True, "message": "Held: " + held.get("message", "")}
          end
          return {"done": False, "successful": False, "message": "Waiting for generation " + str(gen) + " to be installed or held"}
        end
`
