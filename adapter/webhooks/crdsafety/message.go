package crdsafety

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxMessage bounds a refusal. kapp wraps it in its own error, and the
// BundleDeployment's condition keeps 2 KiB of that, far below the 32 KiB a
// condition message may hold: the whole refusal must survive both.
const MaxMessage = 1024

// maxDetail bounds what one problem says, so one object's long list of
// field errors cannot crowd out the others.
const maxDetail = 240

// refusal says why an update was refused in the words of rukpak's webhook
// (its prefix, and its sentence for existing objects), naming for each
// problem the version, the field path, the rule and an example object,
// and how to opt out.
func refusal(in Input, problems []Problem, stopped error) string {
	name := in.New.Name
	optOut := fmt.Sprintf("set the %q annotation to \"false\"", AnnotationValidation)
	if in.BundleDeployment != "" {
		optOut += fmt.Sprintf(", or spec.preflight.crdUpgradeSafety.disabled to true on BundleDeployment %q", in.BundleDeployment)
	}
	op := in.Operation
	if op == "" {
		op = "UPDATE"
	}
	head := fmt.Sprintf("failed to validate safety of %s for CRD %q (NOTE: to disable this validation, %s): ", op, name, optOut)

	var schemaParts, objectParts []string
	for _, p := range problems {
		if p.Rule == RuleExistingObjects {
			objectParts = append(objectParts, cut(fmt.Sprintf("existing custom object %s failed validation against version %q: %s", p.Object, p.Version, p.Detail), maxDetail))
			continue
		}
		schemaParts = append(schemaParts, cut(describe(p), maxDetail))
	}
	var sections []section
	if len(schemaParts) > 0 {
		sections = append(sections, section{fmt.Sprintf("validating upgrade for CRD %q failed: ", name), schemaParts})
	}
	if len(objectParts) > 0 {
		sections = append(sections, section{fmt.Sprintf("error validating existing CRs against new CRD's schema for %q: ", name), objectParts})
	}
	if stopped != nil {
		sections = append(sections, section{"", []string{cut(stopped.Error(), maxDetail)}})
	}
	return bounded(head, sections, MaxMessage)
}

func describe(p Problem) string {
	where := ""
	switch {
	case p.Version != "" && p.Field != "":
		where = fmt.Sprintf("version %q, field %q: ", p.Version, p.Field)
	case p.Version != "":
		where = fmt.Sprintf("version %q: ", p.Version)
	}
	return fmt.Sprintf("%s%s (%s)", where, p.Detail, p.Rule)
}

type section struct {
	intro string
	items []string
}

// bounded joins the sections' items while they fit in limit bytes, then
// counts what was left out.
func bounded(head string, sections []section, limit int) string {
	var b strings.Builder
	b.WriteString(head)
	total := 0
	for _, s := range sections {
		total += len(s.items)
	}
	written := 0
	for si, s := range sections {
		for i, item := range s.items {
			piece := item
			switch {
			case i == 0 && si > 0:
				piece = "; " + s.intro + item
			case i == 0:
				piece = s.intro + item
			default:
				piece = "; " + item
			}
			// Room for the count of what is left out.
			const reserve = len("; and 999 more problems")
			if b.Len()+len(piece) > limit-reserve && written > 0 {
				fmt.Fprintf(&b, "; and %d more problems", total-written)
				return b.String()
			}
			b.WriteString(piece)
			written++
		}
	}
	return cut(b.String(), limit)
}

// cut bounds s to limit bytes on a character boundary: half a character
// would be stored as U+FFFD and never equal the text computed again.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const more = "…"
	end := limit - len(more)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + more
}
