package store

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// age moves the last look at bd's tracked branch back by d, as if d had
// passed since.
func age(t *testing.T, s *Store, bd *rukpakv1alpha2.BundleDeployment, d time.Duration) {
	t.Helper()
	v, ok := s.cache.entries.Get(bd.UID)
	if !ok {
		t.Fatal("nothing remembered")
	}
	f := v.(Fetched)
	f.checked = f.checked.Add(-d)
	s.cache.put(bd, f)
}

// A tracked branch is compared with its remote at most once per branch
// sync period. A moved head is fetched; a head that is the commit refused
// last is not, and the deployed content stays installed alongside the
// refusal until the branch moves on.
func TestGatherFollowsATrackedBranch(t *testing.T) {
	t.Parallel()
	k := fakekube.New(nil)
	fetcher := &fakeFetcher{files: plainFiles("c1"), head: "c1"}
	s := New(k.Client, testCfg, fetcher, &fakeAPIs{})
	bd := branchBD("tracked")
	period := testCfg.BranchSyncPeriod

	type want struct {
		fetches, heads int
		commit         string
		refused        bool
	}
	step := func(name string, w want) Fetched {
		t.Helper()
		sc := scopeOf(bd)
		f, o, stop := s.Gather(context.Background(), sc)
		timer, err := o.Timer, o.Err
		if err != nil || stop {
			t.Fatalf("%s: stop %v, err %v", name, stop, err)
		}
		fetches, heads := fetcher.counts()
		if fetches != w.fetches || heads != w.heads {
			t.Errorf("%s: %d fetches and %d remote lookups, want %d and %d", name, fetches, heads, w.fetches, w.heads)
		}
		if got := sc.Facts.Fetched.Git.Ref.Commit; got != w.commit {
			t.Errorf("%s: installs commit %q, want %q", name, got, w.commit)
		}
		if refused := o.Failure != nil; refused != w.refused || (refused && o.Failure.Kind != status.BundleInvalid) {
			t.Errorf("%s: failure %+v, want refused=%v", name, o.Failure, w.refused)
		}
		if timer != period {
			t.Errorf("%s: look again after %v, want the branch sync period %v", name, timer, period)
		}
		return f
	}

	c1 := step("first", want{fetches: 1, heads: 0, commit: "c1"})
	for range 3 {
		step("within the period", want{fetches: 1, heads: 0, commit: "c1"})
	}
	age(t, s, bd, period)
	step("a period later, unmoved", want{fetches: 1, heads: 1, commit: "c1"})
	step("just after that look", want{fetches: 1, heads: 1, commit: "c1"})

	fetcher.set(plainFiles("c2"), "c2", nil)
	step("moved, within the period", want{fetches: 1, heads: 1, commit: "c1"})
	age(t, s, bd, period)
	c2 := step("moved", want{fetches: 2, heads: 2, commit: "c2"})
	if cmp.Equal(names(c1), names(c2)) {
		t.Fatalf("commit c2 is stored in c1's Secrets %v", names(c1))
	}

	fetcher.set(noManifests, "c3", nil)
	age(t, s, bd, period)
	kept := step("moved to an invalid bundle", want{fetches: 3, heads: 3, commit: "c2", refused: true})
	if !cmp.Equal(names(kept), names(c2)) {
		t.Errorf("alongside the refusal it installs %v, want the deployed %v", names(kept), names(c2))
	}
	age(t, s, bd, period)
	step("still at the refused commit", want{fetches: 3, heads: 4, commit: "c2", refused: true})
	step("just after that look", want{fetches: 3, heads: 4, commit: "c2", refused: true})

	fetcher.set(plainFiles("c4"), "c4", nil)
	age(t, s, bd, period)
	step("moved past the refused commit", want{fetches: 4, heads: 5, commit: "c4"})
}
