package catalog

import (
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

func TestImageOf(t *testing.T) {
	if img, _ := ImageOf(map[string]string{AnnotationImage: "a"}, nil); img != "a" {
		t.Fatal(img)
	}
	inline := map[string]string{operatorInstallFile: operatorInstallYtt(Install{Entry: Entry{Package: "p", Bundle: "b"}, Image: "reg/p@sha256:1", Class: "core-rukpak-io-plain"})}
	if img, err := ImageOf(nil, inline); err != nil || img != "reg/p@sha256:1" {
		t.Fatal(img, err)
	}
	// A template of an earlier release rendered the BundleDeployment.
	legacy := map[string]string{legacyBundleDeploymentFile: "spec:\n  source:\n    image:\n      ref: \"reg/p@sha256:2\"\n"}
	if img, err := ImageOf(nil, legacy); err != nil || img != "reg/p@sha256:2" {
		t.Fatal(img, err)
	}
	if _, err := ImageOf(nil, nil); err == nil {
		t.Fatal("no image must be an error")
	}
}
