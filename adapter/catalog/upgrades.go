package catalog

import "slices"

// Upgrades is what a channel offers beyond an installed bundle, as the
// UpgradeAvailable condition says it.
type Upgrades struct {
	// Head is the highest version the channel publishes (installed itself
	// when nothing is higher: a head of another bundle is higher).
	Head Entry
	// Path leads from the installed bundle (first) to the highest version
	// reachable from it (last), one edge at a time, as a walk would take
	// it; nil when no higher version is reachable.
	Path []Entry
}

// Available says a higher version is reachable.
func (u Upgrades) Available() bool { return len(u.Path) > 1 }

// Target is the highest version reachable: the end of the path.
func (u Upgrades) Target() Entry { return u.Path[len(u.Path)-1] }

// Versions are the path's versions, in order.
func (u Upgrades) Versions() []string {
	out := make([]string, len(u.Path))
	for i, e := range u.Path {
		out[i] = e.Version
	}
	return out
}

// Head is the highest version of pkg among published; ok is false when
// published holds none.
func Head(published []Entry, pkg string) (head Entry, ok bool) {
	for _, e := range published {
		if e.Package == pkg && (!ok || compareVersions(e.Version, head.Version) > 0) {
			head, ok = e, true
		}
	}
	return head, ok
}

// UpgradesFrom reads what published (the entries of the installed bundle's
// channel) offers beyond installed under the install's
// upgradeConstraintPolicy: the channel's head, and the shortest path to
// the highest version reachable along the channel's edges (the path
// ShortestPath takes, so the walk that installs it goes the same way), or
// under SelfCertified, which the edges do not bind, the head in one move.
func UpgradesFrom(installed Entry, published []Entry, policy string) Upgrades {
	u := Upgrades{Head: installed}
	nodes := make([]Node, 0, len(published))
	for _, e := range published {
		if e.Package != installed.Package {
			continue
		}
		nodes = append(nodes, Node{Entry: e})
		if compareVersions(e.Version, u.Head.Version) > 0 {
			u.Head = e
		}
	}
	// Every bundle the channel reaches from installed, in any number of
	// edges.
	reached := map[string]bool{installed.Bundle: true}
	queue := []Entry{installed}
	best := installed
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		for _, n := range nodes {
			if reached[n.Entry.Bundle] || !n.Entry.ReachedFrom(at) {
				continue
			}
			reached[n.Entry.Bundle] = true
			queue = append(queue, n.Entry)
			if compareVersions(n.Entry.Version, best.Version) > 0 {
				best = n.Entry
			}
		}
	}
	if policy == PolicySelfCertified {
		best = u.Head
	}
	if best.Bundle == installed.Bundle {
		return u
	}
	for _, n := range MovePath(installed, best, nodes, policy) {
		u.Path = append(u.Path, n.Entry)
	}
	return u
}

// MovePath is the path a move from installed to target takes among
// published under the install's upgradeConstraintPolicy: one move under
// SelfCertified, which the channel's edges do not bind, else the path a
// walk takes (ShortestPath); nil when there is none. The installed end is
// installed itself; the other ends are published.
func MovePath(installed, target Entry, published []Node, policy string) []Node {
	if policy != PolicySelfCertified {
		return ShortestPath(installed, target, published)
	}
	i := slices.IndexFunc(published, func(n Node) bool { return n.Entry.Bundle == target.Bundle })
	if i < 0 {
		return nil
	}
	return []Node{{Entry: installed}, published[i]}
}
