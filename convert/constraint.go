package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// constraint is the value of an olm.constraint dependency (operator-
// framework/api's constraints format): exactly one of a GVK, a package
// range, a compound of nested constraints, or a CEL rule over a catalog
// bundle's properties.
type constraint struct {
	FailureMessage string      `json:"failureMessage,omitempty"`
	GVK            *gvkValue   `json:"gvk,omitempty"`
	Package        *pkgRange   `json:"package,omitempty"`
	All            *compound   `json:"all,omitempty"`
	Any            *compound   `json:"any,omitempty"`
	Not            *compound   `json:"not,omitempty"`
	Cel            *celRuleRef `json:"cel,omitempty"`
}

type gvkValue struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func (g gvkValue) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
}

type pkgRange struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

type compound struct {
	Constraints []constraint `json:"constraints"`
}

type celRuleRef struct {
	Rule string `json:"rule"`
}

// maxConstraintSize is OLM's bound on an olm.constraint value, which keeps
// the nesting of a value it accepts bounded.
const maxConstraintSize = 2 << 16

// parseConstraint reads and checks a constraint as OLM's resolver would:
// unknown fields, an empty constraint or a bad range make it unusable.
func parseConstraint(raw json.RawMessage) (constraint, error) {
	var c constraint
	if len(raw) > maxConstraintSize {
		return c, fmt.Errorf("the value is over %d bytes", maxConstraintSize)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("the value is not a constraint: %w", err)
	}
	return c, c.validate()
}

func (c constraint) validate() error {
	set := 0
	for _, ok := range []bool{c.GVK != nil, c.Package != nil, c.All != nil, c.Any != nil, c.Not != nil, c.Cel != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return errors.New("each constraint needs exactly one of gvk, package, all, any, not or cel")
	}
	switch {
	case c.Package != nil:
		if c.Package.PackageName == "" {
			return errors.New("a package constraint names no packageName")
		}
		if _, err := semver.ParseRange(c.Package.VersionRange); err != nil {
			return fmt.Errorf("%q is not a semver version range: %w", c.Package.VersionRange, err)
		}
	case c.GVK != nil:
		if c.GVK.Version == "" || c.GVK.Kind == "" {
			return errors.New("a gvk constraint names no version or no kind")
		}
	}
	for _, sub := range c.nested() {
		if err := sub.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (c constraint) nested() []constraint {
	for _, cc := range []*compound{c.All, c.Any, c.Not} {
		if cc != nil {
			return cc.Constraints
		}
	}
	return nil
}

// truth is a constraint's value on a cluster; a CEL rule is unknown here.
type truth int

const (
	unmetTruth truth = iota
	metTruth
	unknownTruth
)

// eval decides a constraint over the cluster. OLM tests a constraint
// against one candidate bundle at a time; here GVKs and packages may be
// provided by different installs, which is what matters once installed.
// why says, when not met, what is missing.
func (c constraint) eval(facts Facts) (truth, string) {
	switch {
	case c.GVK != nil:
		if facts.Served[c.GVK.gvk()] {
			return metTruth, ""
		}
		return unmetTruth, fmt.Sprintf("the cluster does not serve %s", describeGVK(c.GVK.gvk()))
	case c.Package != nil:
		if why := packageMissing(c.Package.PackageName, c.Package.VersionRange, facts.Installed); why != "" {
			return unmetTruth, why
		}
		return metTruth, ""
	case c.Cel != nil:
		return unknownTruth, fmt.Sprintf("CEL rule %q tests catalog bundles, which a cluster does not list", c.Cel.Rule)
	}
	var whys []string
	counts := map[truth]int{}
	for _, sub := range c.nested() {
		t, why := sub.eval(facts)
		counts[t]++
		if t != metTruth {
			whys = append(whys, why)
		}
	}
	switch {
	case c.All != nil:
		switch {
		case counts[unmetTruth] > 0:
			return unmetTruth, strings.Join(whys, "; ")
		case counts[unknownTruth] > 0:
			return unknownTruth, strings.Join(whys, "; ")
		}
		return metTruth, ""
	case c.Any != nil:
		switch {
		case counts[metTruth] > 0:
			return metTruth, ""
		case counts[unknownTruth] > 0:
			return unknownTruth, "none of its alternatives is known to hold: " + strings.Join(whys, "; ")
		}
		return unmetTruth, "none of its alternatives holds: " + strings.Join(whys, "; ")
	default: // Not
		var held []string
		for _, sub := range c.nested() {
			if t, _ := sub.eval(facts); t == metTruth {
				held = append(held, sub.describe())
			}
		}
		switch {
		case len(held) > 0:
			return unmetTruth, "it excludes what the cluster has: " + strings.Join(held, "; ")
		case counts[unknownTruth] > 0:
			return unknownTruth, strings.Join(whys, "; ")
		}
		return metTruth, ""
	}
}

// describe says what a constraint asks for.
func (c constraint) describe() string {
	switch {
	case c.GVK != nil:
		return describeGVK(c.GVK.gvk()) + " served"
	case c.Package != nil:
		return fmt.Sprintf("package %s in range %q installed", c.Package.PackageName, c.Package.VersionRange)
	case c.Cel != nil:
		return fmt.Sprintf("CEL rule %q", c.Cel.Rule)
	}
	var subs []string
	for _, sub := range c.nested() {
		subs = append(subs, sub.describe())
	}
	op := map[bool]string{c.All != nil: "all of", c.Any != nil: "one of", c.Not != nil: "none of"}[true]
	return op + " (" + strings.Join(subs, "; ") + ")"
}
