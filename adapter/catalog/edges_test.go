package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestCheckUpgrade(t *testing.T) {
	installed := Entry{Package: "p", Channel: "beta", Bundle: "p.1.0.1", Version: "1.0.1"}
	tests := []struct {
		name      string
		asked     Entry
		policy    string
		reachable []string
		// refused: the words the refusal must hold; nil when allowed.
		refused []string
	}{
		{name: "the same bundle (values changed)", asked: installed},
		{name: "replaces", asked: Entry{Package: "p", Bundle: "p.1.2.0", Version: "1.2.0", Replaces: "p.1.0.1"}},
		{name: "skips", asked: Entry{Package: "p", Bundle: "p.1.3.0", Version: "1.3.0", Skips: []string{"p.1.0.0", "p.1.0.1"}}},
		{name: "skipRange", asked: Entry{Package: "p", Bundle: "p.1.4.0", Version: "1.4.0", SkipRange: ">=1.0.0 <1.4.0"}},
		{name: "skipRange without the installed version",
			asked: Entry{Package: "p", Channel: "beta", Bundle: "p.1.4.0", Version: "1.4.0", SkipRange: ">=1.1.0 <1.4.0"}, reachable: []string{"1.2.0"},
			refused: []string{"version 1.0.1 is installed and 1.4.0 was asked for", "skipRange >=1.1.0 <1.4.0", "from it the channel reaches 1.2.0", "--version 1.2.0", "upgradeConstraintPolicy: SelfCertified"}},
		{name: "two edges away",
			asked: Entry{Package: "p", Channel: "beta", Bundle: "p.2.0.0", Version: "2.0.0", Replaces: "p.1.2.0"}, reachable: []string{"1.2.0", "1.3.0"},
			refused: []string{"channel beta does not reach from 1.0.1", "replaces p.1.2.0", "from it the channel reaches 1.2.0, 1.3.0", "--version 1.3.0",
				`kapp-controller now takes 1.3.0 for a downgrade from 2.0.0, so annotate the PackageInstall first (kubectl annotate packageinstall prom -n ops packaging.carvel.dev/downgradable="")`}},
		{name: "a downgrade", asked: Entry{Package: "p", Channel: "beta", Bundle: "p.1.0.0", Version: "1.0.0"}, reachable: []string{},
			refused: []string{"1.0.0 was asked for", "it is the first bundle of its channel", "no version published in this channel reaches it"}},
		{name: "the reachable versions unreadable", asked: Entry{Package: "p", Bundle: "p.9", Version: "9.0.0"},
			refused: []string{"the versions that reach it could not be read"}},
		{name: "another package", asked: Entry{Package: "q", Bundle: "q.1", Version: "1.0.0", Replaces: "p.1.0.1"},
			refused: []string{"installed the OLM package p (version 1.0.1); it cannot become package q"}},
		{name: "self-certified", asked: Entry{Package: "p", Bundle: "p.9", Version: "9.0.0"}, policy: PolicySelfCertified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckUpgrade(installed, tt.asked, tt.policy, tt.reachable, "ops/prom")
			if tt.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("allowed")
			}
			for _, w := range tt.refused {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestReachable(t *testing.T) {
	installed := Entry{Package: "p", Bundle: "p.1", Version: "1.0.0"}
	published := []Entry{
		installed,
		{Package: "p", Bundle: "p.3", Version: "3.0.0", SkipRange: "<3.0.0"},
		{Package: "p", Bundle: "p.2", Version: "2.0.0", Replaces: "p.1"},
		{Package: "p", Bundle: "p.2-beta", Version: "2.0.0", Replaces: "p.1"}, // the same version in another channel
		{Package: "p", Bundle: "p.4", Version: "4.0.0", Replaces: "p.3"},
		{Package: "q", Bundle: "q.9", Version: "9.0.0", Replaces: "p.1"},
	}
	if got := Reachable(installed, published); !slices.Equal(got, []string{"2.0.0", "3.0.0"}) {
		t.Errorf("Reachable = %v", got)
	}
}

func TestEntryAnnotationsRoundTrip(t *testing.T) {
	e := Entry{Package: "p", Channel: "c", Bundle: "b", Version: "1.0.0+x", Replaces: "a", Skips: []string{"s1", "s2"}, SkipRange: "<1.0.0", RefName: "c.p.d.e"}
	got, ok := EntryOf(map[string]string{LabelPackage: "p"}, e.Annotations())
	if !ok || got.Bundle != e.Bundle || !slices.Equal(got.Skips, e.Skips) || got.SkipRange != e.SkipRange || got.Version != e.Version || got.RefName != e.RefName {
		t.Errorf("EntryOf(Annotations) = %+v, %v", got, ok)
	}
	if _, ok := EntryOf(nil, e.Annotations()); ok {
		t.Error("an object without the package label is no catalog entry")
	}
}
