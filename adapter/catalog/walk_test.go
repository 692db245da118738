package catalog

import (
	"errors"
	"strings"
	"testing"
)

// beta is operator-controller's test channel (1.0.0 ← 1.0.1 ← 1.2.0 ←
// 2.0.0 by replaces), with 2.1.0 skipping 1.2.0 and 2.0.0 as a shortcut
// and 3.0.0 whose skipRange holds everything below it.
func beta() []Node {
	e := func(v, replaces string, skips ...string) Node {
		en := Entry{Package: "p", Channel: "beta", Bundle: "p." + v, Version: v, Skips: skips}
		if replaces != "" {
			en.Replaces = "p." + replaces
		}
		return Node{Entry: en, Image: "reg/p:v" + v}
	}
	return []Node{e("1.0.0", ""), e("1.0.1", "1.0.0"), e("1.2.0", "1.0.1"), e("2.0.0", "1.2.0"), e("2.1.0", "2.0.0", "p.1.2.0")}
}

func entry(nodes []Node, v string) Entry {
	for _, n := range nodes {
		if n.Entry.Version == v {
			return n.Entry
		}
	}
	panic(v)
}

func TestShortestPath(t *testing.T) {
	nodes := beta()
	withRange := append(beta(), Node{Entry: Entry{Package: "p", Channel: "beta", Bundle: "p.3.0.0", Version: "3.0.0", SkipRange: "<3.0.0"}})
	tests := []struct {
		name             string
		nodes            []Node
		installed, asked string
		want             string
	}{
		{"one edge", nodes, "1.0.0", "1.0.1", "1.0.0 → 1.0.1"},
		{"three edges by replaces", nodes, "1.0.0", "2.0.0", "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0"},
		{"a skip shortens the path", nodes, "1.0.0", "2.1.0", "1.0.0 → 1.0.1 → 1.2.0 → 2.1.0"},
		{"a skipRange reaches in one edge", withRange, "1.0.0", "3.0.0", "1.0.0 → 3.0.0"},
		{"no path backwards", nodes, "2.0.0", "1.0.1", ""},
		{"another package's bundle is no step", append(beta(), Node{Entry: Entry{Package: "q", Bundle: "q.1", Version: "1.5.0", Replaces: "p.1.0.0"}}), "1.0.0", "1.2.0", "1.0.0 → 1.0.1 → 1.2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ShortestPath(entry(tt.nodes, tt.installed), entry(tt.nodes, tt.asked), tt.nodes)
			var got []string
			for _, n := range path {
				got = append(got, n.Entry.Version)
			}
			if Describe(got) != tt.want {
				t.Fatalf("path %q, want %q", Describe(got), tt.want)
			}
		})
	}
}

func TestPlanWalk(t *testing.T) {
	nodes := beta()
	three := Walk{Path: ShortestPath(entry(nodes, "1.0.0"), entry(nodes, "2.0.0"), nodes)}
	oneEdge := Walk{Path: ShortestPath(entry(nodes, "1.0.0"), entry(nodes, "1.0.1"), nodes)}
	if got := OneEdge(entry(nodes, "1.0.0"), entry(nodes, "1.0.1")); got != oneEdge.Record() {
		t.Fatalf("OneEdge %s, want %s", got, oneEdge.Record())
	}
	app := func(v string, done bool, walk *Walk) Deployed {
		a := map[string]string{AnnotationBundle: "p." + v, AnnotationVersion: v}
		if walk != nil {
			a[AnnotationWalk] = walk.Record()
		}
		return Deployed{Annotations: a, Done: done}
	}
	tests := []struct {
		name   string
		asked  string
		policy string
		app    Deployed
		// want is the path and its step ("" no walk); wantErr a refusal's words.
		want    string
		step    string
		wantErr string
		listed  bool
	}{
		{name: "no App says what is installed", asked: "2.0.0", app: Deployed{}},
		{name: "a first install under way", asked: "2.0.0", app: app("1.0.0", false, nil)},
		{name: "one edge from what is deployed", asked: "1.0.1", app: app("1.0.0", true, nil)},
		{name: "values changed", asked: "1.0.0", app: app("1.0.0", true, nil)},
		{name: "three edges: the first step", asked: "2.0.0", app: app("1.0.0", true, nil), want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "1.0.1", listed: true},
		{name: "a step under way stays the step", asked: "2.0.0", app: app("1.0.1", false, &three), want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "1.0.1", listed: true},
		{name: "a step done: the next, the path kept", asked: "2.0.0", app: app("1.0.1", true, &three), want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "1.2.0", listed: true},
		{name: "the last step, without the list", asked: "2.0.0", app: app("1.2.0", true, &three), want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "2.0.0"},
		{name: "the walk's end, said until the App moves on", asked: "2.0.0", app: app("2.0.0", true, &three), want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "2.0.0"},
		{name: "a failed step: the walk from what it left", asked: "2.0.0", app: app("1.2.0", false, &three), want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "1.2.0", listed: true},
		{name: "asked changed during the walk: a new walk from what is installed", asked: "2.1.0", app: app("1.0.1", true, &three), want: "1.0.1 → 1.2.0 → 2.1.0", step: "1.2.0", listed: true},
		{name: "after the walk, another move is its own", asked: "2.1.0", app: app("2.0.0", true, &three)},
		{name: "a one-edge move under way, then a request further on: the walk starts from what is installed", asked: "2.0.0", app: app("1.0.1", false, &oneEdge),
			want: "1.0.0 → 1.0.1 → 1.2.0 → 2.0.0", step: "1.0.1", listed: true},
		{name: "no path", asked: "1.0.1", app: app("2.0.0", true, nil), listed: true,
			wantErr: "channel beta of package p has no path from 2.0.0 (installed) to 1.0.1"},
		{name: "self-certified jumps", asked: "2.0.0", policy: PolicySelfCertified, app: app("1.0.0", true, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listed := false
			w, err := PlanWalk(entry(nodes, tt.asked), tt.policy, tt.app, func() ([]Node, error) { listed = true; return nodes, nil })
			if listed != tt.listed {
				t.Errorf("listed the channel: %v, want %v", listed, tt.listed)
			}
			if tt.wantErr != "" {
				var np *NoPathError
				if !errors.As(err, &np) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a NoPathError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if w != nil {
					t.Fatalf("walk %s, want none", Describe(w.Versions()))
				}
				return
			}
			if w == nil {
				t.Fatalf("no walk, want %s", tt.want)
			}
			if got := Describe(w.Versions()); got != tt.want || w.Current().Entry.Version != tt.step {
				t.Fatalf("walk %s at %s, want %s at %s", got, w.Current().Entry.Version, tt.want, tt.step)
			}
			if w.Current().Entry.Version == tt.asked != w.Final() {
				t.Fatalf("Final() = %v at %s", w.Final(), w.Current().Entry.Version)
			}
		})
	}
	if _, err := PlanWalk(entry(nodes, "2.0.0"), "", app("1.0.0", true, nil), func() ([]Node, error) { return nil, errors.New("unavailable") }); err == nil {
		t.Fatal("a failed list must fail the plan")
	}
}

func TestImageOf(t *testing.T) {
	if img, _ := ImageOf(map[string]string{AnnotationImage: "a"}, nil); img != "a" {
		t.Fatal(img)
	}
	inline := map[string]string{bundleDeploymentFile: bundleDeploymentYtt(Install{Entry: Entry{Package: "p", Bundle: "b"}, Image: "reg/p@sha256:1", Class: "core-rukpak-io-plain"})}
	if img, err := ImageOf(nil, inline); err != nil || img != "reg/p@sha256:1" {
		t.Fatal(img, err)
	}
	if _, err := ImageOf(nil, nil); err == nil {
		t.Fatal("no image must be an error")
	}
}

// A deployed step is mid-walk only while the walk it records still has a
// step after it, towards the bundle asked for.
func TestMidWalk(t *testing.T) {
	t.Parallel()
	path := `[{"bundle":"op.v1","version":"1.0.0"},{"bundle":"op.v2","version":"2.0.0"},{"bundle":"op.v3","version":"3.0.0"}]`
	asked := Entry{Package: "op", Bundle: "op.v3", Version: "3.0.0"}
	app := func(bundle, walk string, done bool) Deployed {
		return Deployed{Annotations: map[string]string{AnnotationBundle: bundle, AnnotationWalk: walk}, Done: done}
	}
	for name, tt := range map[string]struct {
		d     Deployed
		asked Entry
		want  bool
	}{
		"a middle step deployed":         {app("op.v2", path, true), asked, true},
		"a middle step still deploying":  {app("op.v2", path, false), asked, false},
		"the last step deployed":         {app("op.v3", path, true), asked, false},
		"the first, installed before":    {app("op.v1", path, true), asked, false},
		"asked for another bundle since": {app("op.v2", path, true), Entry{Package: "op", Bundle: "op.v4"}, false},
		"a move of one edge":             {app("op.v2", `[{"bundle":"op.v1"},{"bundle":"op.v2"}]`, true), Entry{Package: "op", Bundle: "op.v2"}, false},
		"no walk recorded":               {app("op.v2", "", true), asked, false},
		"a record that is no JSON":       {app("op.v2", "{", true), asked, false},
	} {
		if got := tt.d.MidWalk(tt.asked); got != tt.want {
			t.Errorf("%s: MidWalk = %v, want %v", name, got, tt.want)
		}
	}
}
