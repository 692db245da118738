package translate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Style is how kapp treats the objects an App installs.
type Style string

const (
	// StyleAsBundled leaves selectors and pod-template labels as the bundle
	// has them, as rukpak did: kapp still labels every object's metadata
	// (ownership, drift repair and deletion work as with the default style), but does not
	// scope selectors to the App or label pod templates. A BundleDeployment
	// owner reference left by rukpak is dropped, so kapp alone owns what it
	// installs. Every App made from this version on has it.
	StyleAsBundled Style = "as-bundled"
	// StyleLabelScoped is kapp's default: selectors carry kapp's app label
	// and pod templates its labels. Apps made before StyleAsBundled keep it,
	// because changing an installed workload's selector fails ("field is
	// immutable") and changing its pod template rolls it.
	StyleLabelScoped Style = "label-scoped"
)

// AnnotationStyle marks an App with its Style. Apps without it were made
// before styles existed and are StyleLabelScoped.
const AnnotationStyle = "core.rukpak.io/kapp-style"

// StyleOf is the style the App for a BundleDeployment keeps, decided from
// its live App (nil when there is none yet): a new App is made as bundled,
// an existing one keeps what it was made with.
func StyleOf(live *kappctrlv1alpha1.App) Style {
	if live == nil {
		return StyleAsBundled
	}
	if Style(live.Annotations[AnnotationStyle]) == StyleAsBundled {
		return StyleAsBundled
	}
	// The template tells too, should the annotation be lost: turning an
	// as-bundled App back would change every workload's selector.
	for _, t := range live.Spec.Template {
		if t.Ytt != nil && t.Ytt.Inline != nil {
			if _, ok := t.Ytt.Inline.Paths[asBundledFile]; ok {
				return StyleAsBundled
			}
		}
	}
	return StyleLabelScoped
}

// AppInStyle is App made in the given style. App itself keeps making
// label-scoped Apps until the reconciler passes the live App's StyleOf.
func AppInStyle(bd *rukpakv1alpha2.BundleDeployment, cfg Config, content *Packed, style Style) (*kappctrlv1alpha1.App, error) {
	app, err := App(bd, cfg, content)
	if err != nil || style != StyleAsBundled {
		return app, err
	}
	if err := addTemplateFiles(app, map[string]string{
		asBundledFile:       asBundledOverlay,
		ownerReferencesFile: ownerReferencesConfig,
	}, asBundledFile); err != nil {
		return nil, err
	}
	if app.Annotations == nil {
		app.Annotations = map[string]string{}
	}
	app.Annotations[AnnotationStyle] = string(StyleAsBundled)
	return app, nil
}

// addTemplateFiles adds inline files to the App's last ytt step, the one
// that already carries the kapp configuration; templates are evaluated as
// ytt templates even where the step marks every other file as plain YAML.
func addTemplateFiles(app *kappctrlv1alpha1.App, files map[string]string, templates ...string) error {
	for i := len(app.Spec.Template) - 1; i >= 0; i-- {
		y := app.Spec.Template[i].Ytt
		if y == nil {
			continue
		}
		if y.Inline == nil {
			y.Inline = &kappctrlv1alpha1.AppFetchInline{}
		}
		if y.Inline.Paths == nil {
			y.Inline.Paths = map[string]string{}
		}
		for name, content := range files {
			y.Inline.Paths[name] = content
		}
		for _, t := range templates {
			if mark := t + ":type=yaml-template"; !slices.Contains(y.FileMarks, mark) {
				y.FileMarks = append(y.FileMarks, mark)
			}
		}
		return nil
	}
	return fmt.Errorf("app %s has no ytt template step to carry the kapp configuration", app.Name)
}

// asBundledFile annotates every object (the items of a List too, as kapp
// reads them one by one) so kapp's default label scoping and pod-template
// ownership labels leave it alone. kapp's own Config documents are skipped.
const asBundledFile = "rukpak-kapp-as-bundled.yml"

var asBundledOverlay = metadataOverlay(map[string]string{
	"kapp.k14s.io/disable-default-label-scoping-rules":   "",
	"kapp.k14s.io/disable-default-ownership-label-rules": "",
}, nil, nil)

// metadataOverlay is a ytt overlay that merges labels and annotations into
// every object's metadata and appends owner references. The values travel
// as JSON, so no name can break out of the template.
func metadataOverlay(annotations, labels map[string]string, ownerRefs []metav1.OwnerReference) string {
	values, err := json.Marshal(map[string]any{"annotations": annotations, "labels": labels, "ownerReferences": ownerRefs})
	if err != nil {
		// Maps of strings and owner references always marshal.
		panic(err)
	}
	return fmt.Sprintf(metadataOverlayTemplate, strconv.Quote(string(values)))
}

const metadataOverlayTemplate = `#@ load("@ytt:overlay", "overlay")
#@ load("@ytt:json", "json")

#@ add = json.decode(%s)

#@ def merged(m, extra):
#@   out = {}
#@   if m != None:
#@     for k in m:
#@       out[k] = m[k]
#@     end
#@   end
#@   if extra != None:
#@     for k in extra:
#@       out[k] = extra[k]
#@     end
#@   end
#@   return out
#@ end

#@ def with_metadata(obj):
#@   out = merged(obj, None)
#@   meta = merged(obj["metadata"] if "metadata" in obj else None, None)
#@   if add["annotations"]:
#@     meta["annotations"] = merged(meta["annotations"] if "annotations" in meta else None, add["annotations"])
#@   end
#@   if add["labels"]:
#@     meta["labels"] = merged(meta["labels"] if "labels" in meta else None, add["labels"])
#@   end
#@   if add["ownerReferences"]:
#@     refs = [r for r in meta["ownerReferences"]] if "ownerReferences" in meta and meta["ownerReferences"] != None else []
#@     meta["ownerReferences"] = refs + add["ownerReferences"]
#@   end
#@   out["metadata"] = meta
#@   return out
#@ end

#@ def is_kapp_config(doc):
#@   return "apiVersion" in doc and doc["apiVersion"] == "kapp.k14s.io/v1alpha1" and "kind" in doc and doc["kind"] == "Config"
#@ end

#@ def is_list(doc):
#@   return "items" in doc and type(doc["items"]) == "yamlfragment" and json.encode(doc["items"]).startswith("[")
#@ end

#@ def apply(left, right):
#@   if is_kapp_config(left):
#@     return left
#@   end
#@   if not is_list(left):
#@     return with_metadata(left)
#@   end
#@   out = merged(left, None)
#@   out["items"] = [with_metadata(i) if type(i) == "yamlfragment" else i for i in left["items"]]
#@   return out
#@ end

#@overlay/match by=lambda i, left, right: type(left) == "yamlfragment", expects="0+"
#@overlay/replace via=apply
---
`

// ownerReferencesFile is a kapp rebase rule: when kapp updates an object,
// owner references to a BundleDeployment are taken from what kapp applies
// (none, unless a release hands the object back to rukpak) rather than
// kept from the cluster, and every other owner reference is kept. rukpak
// made its BundleDeployment the controller of everything it installed;
// left in place, rukpak (if it still runs) would be woken by every change
// kapp makes and re-apply its release over it.
const ownerReferencesFile = "rukpak-kapp-owner-references.yml"

const ownerReferencesConfig = `apiVersion: kapp.k14s.io/v1alpha1
kind: Config
rebaseRules:
- ytt:
    overlayContractV1:
      overlay.yml: |
        #@ load("@ytt:data", "data")
        #@ load("@ytt:overlay", "overlay")

        #@ def refs(res):
        #@   if res == None or not hasattr(res, "metadata") or not hasattr(res.metadata, "ownerReferences") or res.metadata.ownerReferences == None:
        #@     return []
        #@   end
        #@   return res.metadata.ownerReferences
        #@ end

        #@ def of_bundle_deployment(ref):
        #@   return ref.kind == "BundleDeployment" and ref.apiVersion.startswith("core.rukpak.io/")
        #@ end

        #@ kept = [r for r in refs(data.values.existing) if not of_bundle_deployment(r)]
        #@ given = [r for r in refs(data.values.new) if of_bundle_deployment(r)]

        #@ result = kept + given

        #@overlay/match by=overlay.all
        ---
        #@overlay/match missing_ok=True
        metadata:
          #@ if len(result) > 0:
          #@overlay/match missing_ok=True
          #@overlay/replace or_add=True
          ownerReferences: #@ result
          #@ else:
          #@overlay/match missing_ok=True
          #@overlay/remove
          ownerReferences:
          #@ end
  resourceMatchers:
  - allMatcher: {}
`
