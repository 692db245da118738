package crdsafety

import (
	"context"
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// AnnotationValidation "false" on a CRD turns the check off for it, as it
// did for rukpak's webhook.
const AnnotationValidation = "core.rukpak.io/safe-crd-upgrade-validation"

// DefaultPageSize is how many custom resources one list request returns.
const DefaultPageSize = 500

// Lister lists one page of a CRD's custom resources, read at version,
// across all namespaces; continueToken "" starts over.
type Lister interface {
	List(ctx context.Context, version, continueToken string, limit int64) (*unstructured.UnstructuredList, error)
}

// Input is one update of a CRD to judge.
type Input struct {
	Old, New *apiextensionsv1.CustomResourceDefinition
	// Operation is the admission operation, for the message.
	Operation string
	// BundleDeployment names the CRD's owner, for the opt-out hint.
	BundleDeployment string
	// OptedOut says the BundleDeployment turned the check off
	// (spec.preflight.crdUpgradeSafety.disabled).
	OptedOut bool
	// Objects lists the existing custom resources. Its context's deadline
	// bounds the whole listing.
	Objects Lister
	// PageSize is the list limit; 0 is DefaultPageSize.
	PageSize int64
}

// Decision is the verdict.
type Decision struct {
	Allowed bool
	// Reason says why an update was let through without a check; empty
	// when it was checked.
	Reason string
	// Message says why it was refused, bounded (see MaxMessage).
	Message string
	// Problems are what was found.
	Problems []Problem
	// Listed is how many custom resources were read.
	Listed int
	// Incomplete says the listing did not finish within the time bound.
	Incomplete bool
}

// Decide judges an update: allowed when it is not an update of a CRD a
// BundleDeployment installed, when an opt-out says so, or when nothing in
// it endangers an existing custom resource.
func Decide(ctx context.Context, in Input) Decision {
	switch {
	case in.Old == nil || in.New == nil:
		return Decision{Allowed: true, Reason: "not an update of an existing CRD"}
	case !ownedByBundleDeployment(in.Old) && !ownedByBundleDeployment(in.New):
		return Decision{Allowed: true, Reason: "not installed by a BundleDeployment"}
	case in.New.DeletionTimestamp != nil:
		return Decision{Allowed: true, Reason: "being deleted"}
	case in.New.Annotations[AnnotationValidation] == "false" || in.Old.Annotations[AnnotationValidation] == "false":
		// On the live CRD too: kapp's update carries the bundle's
		// annotations, not the ones a user put on the live object to opt out.
		return Decision{Allowed: true, Reason: "annotation " + AnnotationValidation + ` is "false"`}
	case in.OptedOut:
		return Decision{Allowed: true, Reason: "BundleDeployment " + in.BundleDeployment + " sets spec.preflight.crdUpgradeSafety.disabled"}
	}
	d := Decision{Problems: Compare(in.Old, in.New)}
	objects, listed, err := checkObjects(ctx, in)
	d.Problems = append(d.Problems, objects...)
	d.Listed = listed
	if err != nil {
		var ie *incompleteError
		d.Incomplete = errors.As(err, &ie)
		d.Message = refusal(in, d.Problems, err)
		return d
	}
	if len(d.Problems) == 0 {
		d.Allowed = true
		return d
	}
	d.Message = refusal(in, d.Problems, nil)
	return d
}

func ownedByBundleDeployment(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return crd.Labels[rukpakv1alpha2.LabelOwnerKind] == rukpakv1alpha2.OwnerKind
}

// checkObjects validates the existing custom resources of every version
// objectChecks names against the new schemas, page by page, until the
// first that fails each version or the context ends. An error means the
// check could not finish, which refuses the update too.
func checkObjects(ctx context.Context, in Input) ([]Problem, int, error) {
	checks := objectChecks(in.Old, in.New)
	if len(checks) == 0 {
		return nil, 0, nil
	}
	limit := in.PageSize
	if limit <= 0 {
		limit = DefaultPageSize
	}
	var out []Problem
	listed := 0
	for _, c := range checks {
		schemas := make([]*schema, 0, len(c.Against))
		for _, v := range c.Against {
			s, err := newSchema(in.New, v)
			if err != nil {
				return out, listed, err
			}
			schemas = append(schemas, s)
		}
		failed := map[string]bool{}
		token := ""
		for {
			if err := ctx.Err(); err != nil {
				return out, listed, &incompleteError{listed: listed, err: err}
			}
			page, err := in.Objects.List(ctx, c.ListVersion, token, limit)
			if err != nil {
				if ctx.Err() != nil {
					return out, listed, &incompleteError{listed: listed, err: ctx.Err()}
				}
				return out, listed, fmt.Errorf("list the existing %s at version %q: %w", in.New.Spec.Names.Plural, c.ListVersion, err)
			}
			for i := range page.Items {
				listed++
				for _, s := range schemas {
					if failed[s.version] {
						continue
					}
					if why := s.judge(&page.Items[i]); why != "" {
						failed[s.version] = true
						out = append(out, Problem{Version: s.version, Rule: RuleExistingObjects, Object: objectName(&page.Items[i]), Detail: why})
					}
				}
			}
			token = page.GetContinue()
			if token == "" || len(failed) == len(schemas) {
				break
			}
		}
	}
	return out, listed, nil
}

func objectName(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// incompleteError says the time bound ended the listing.
type incompleteError struct {
	listed int
	err    error
}

func (e *incompleteError) Error() string {
	return fmt.Sprintf("the existing custom resources could not all be checked in time (%d read): %v", e.listed, e.err)
}

func (e *incompleteError) Unwrap() error { return e.err }
