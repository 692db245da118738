package catalog

import (
	"slices"
	"testing"
)

func TestUpgradesFrom(t *testing.T) {
	e := func(bundle, version string, edges func(*Entry)) Entry {
		out := Entry{Package: "p", Channel: "stable", Bundle: bundle, Version: version}
		if edges != nil {
			edges(&out)
		}
		return out
	}
	replaces := func(b string) func(*Entry) { return func(e *Entry) { e.Replaces = b } }
	v1 := e("p.1", "1.0.0", nil)
	v101 := e("p.1.0.1", "1.0.1", replaces("p.1"))
	v12 := e("p.1.2", "1.2.0", replaces("p.1.0.1"))
	v2 := e("p.2", "2.0.0", func(e *Entry) { e.Replaces = "p.1.2"; e.SkipRange = ">=1.0.0 <1.2.0" })
	orphan := e("p.3", "3.0.0", nil) // no edge from anything installed
	other := Entry{Package: "q", Bundle: "q.9", Version: "9.0.0", Replaces: "p.1"}
	for _, tc := range []struct {
		name      string
		installed Entry
		published []Entry
		head      string
		path      []string
		policy    string
	}{
		{name: "at the head", installed: v2, published: []Entry{v1, v101, v12, v2}, head: "2.0.0"},
		{name: "alone in the channel", installed: v1, published: []Entry{v1}, head: "1.0.0"},
		{name: "one edge", installed: v12, published: []Entry{v1, v101, v12, v2}, head: "2.0.0", path: []string{"1.2.0", "2.0.0"}},
		{name: "a skipRange shortens the path", installed: v1, published: []Entry{v1, v101, v12, v2}, head: "2.0.0", path: []string{"1.0.0", "2.0.0"}},
		{name: "the path's edges, none skipped", installed: v1, published: []Entry{v1, v101, v12, e("p.2", "2.0.0", replaces("p.1.2"))},
			head: "2.0.0", path: []string{"1.0.0", "1.0.1", "1.2.0", "2.0.0"}},
		{name: "a head no edge reaches: the highest reachable, the head said", installed: v1, published: []Entry{v1, v101, orphan},
			head: "3.0.0", path: []string{"1.0.0", "1.0.1"}},
		{name: "nothing reachable", installed: v1, published: []Entry{v1, orphan}, head: "3.0.0"},
		{name: "another package's edges do not count", installed: v1, published: []Entry{v1, other}, head: "1.0.0"},
		{name: "SelfCertified: the head in one move, edges or not", installed: v1, published: []Entry{v1, v101, orphan}, policy: PolicySelfCertified,
			head: "3.0.0", path: []string{"1.0.0", "3.0.0"}},
		{name: "SelfCertified at the head", installed: v2, published: []Entry{v1, v2}, policy: PolicySelfCertified, head: "2.0.0"},
		{name: "the installed bundle not published any more", installed: v1, published: []Entry{v101}, head: "1.0.1", path: []string{"1.0.0", "1.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := UpgradesFrom(tc.installed, tc.published, tc.policy)
			if u.Head.Version != tc.head {
				t.Errorf("head = %s, want %s", u.Head.Version, tc.head)
			}
			if got := u.Versions(); !slices.Equal(got, tc.path) && !(len(got) == 0 && len(tc.path) == 0) {
				t.Errorf("path = %v, want %v", got, tc.path)
			}
			if u.Available() != (len(tc.path) > 1) {
				t.Errorf("Available = %t", u.Available())
			}
		})
	}
}
