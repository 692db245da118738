package catalog

import "fmt"

// AnnotationRetracted, on a catalog Package, says the catalog's current
// revision no longer holds its bundle: the Package is kept only because an
// install runs it (an OperatorCatalog deletes it once none does; a pushed
// repository keeps it while `catalog push --previous` carries it). Its
// value is the revision that dropped it: the catalog image pinned by digest, or the
// repository tag pushed. A Package without it belongs to the revision
// published now.
//
// A retracted Package is no node of its channel's graph, no offer to a
// dependency and no version the update notice names: nothing moves to it,
// and what has it installed stays as it is.
const AnnotationRetracted = "catalog.rukpak-kapp.dev/retracted"

// RetractedIn is the revision that retracted the Package whose annotations
// these are; ok is false for a Package of the current revision.
func RetractedIn(annotations map[string]string) (revision string, ok bool) {
	revision, ok = annotations[AnnotationRetracted]
	return revision, ok
}

// RetractedError is a move to a bundle the channel's current revision no
// longer holds.
type RetractedError struct {
	Asked Entry
	// Revision is the one that dropped it.
	Revision string
	// Install is the PackageInstall "namespace/name" ("" unknown).
	Install string
}

func (e *RetractedError) Error() string {
	ns, _ := installName(e.Install)
	return fmt.Sprintf("version %s of %s was retracted from channel %s (the catalog's revision %s no longer holds bundle %s), so nothing moves to it; "+
		"its Package is kept only while an install runs it. Ask for a version the channel publishes: kctrl package available get -p %s -n %s lists them",
		e.Asked.Version, e.Asked.Package, e.Asked.Channel, e.Revision, e.Asked.Bundle, e.Asked.RefName, ns)
}
