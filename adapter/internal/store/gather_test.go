package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// The content of one generation is fetched once: the reconciles that
// follow (one per App status change) reuse it and write nothing.
func TestGatherReusesTheGenerationsContent(t *testing.T) {
	t.Parallel()
	k, fetcher, s := storeOf(plainFiles("one"))
	bd := plainBD("reuse")

	first, sc, stop := gather(t, s, bd)
	if stop || first.Secrets == nil || sc.Failure != nil {
		t.Fatalf("first Gather: stop %v, secrets %v, failure %+v", stop, first.Secrets, sc.Failure)
	}
	if got := contentSecrets(t, k.Raw, systemNS, bd.Name); !cmp.Equal(got, names(first)) {
		t.Fatalf("content Secrets %v, Gather names %v", got, names(first))
	}
	if sc.Facts.Fetched == nil || sc.Facts.Fetched.Image.Ref != bd.Spec.Source.Image.Ref {
		t.Errorf("facts.Fetched = %+v", sc.Facts.Fetched)
	}

	k.Reset()
	for i := range 3 {
		again, _, stop := gather(t, s, bd)
		if stop || !cmp.Equal(names(again), names(first)) {
			t.Fatalf("Gather %d: stop %v, secrets %v, want %v", i+2, stop, names(again), names(first))
		}
	}
	if n, _ := fetcher.counts(); n != 1 {
		t.Errorf("fetched %d times for one generation, want 1", n)
	}
	k.ExpectWrites(t, "an unchanged reconcile")

	// A new generation is new content.
	next := bd.DeepCopy()
	next.Generation = 2
	fetcher.set(plainFiles("two"), "", nil)
	f, _, _ := gather(t, s, next)
	if n, _ := fetcher.counts(); n != 2 || cmp.Equal(names(f), names(first)) {
		t.Errorf("generation 2: %d fetches, secrets %v (generation 1: %v)", n, names(f), names(first))
	}
}

// A restarted adapter recovers what it fetched from the App it wrote (its
// generation and resolved-source annotations and the content Secrets its
// inline fetch names), so it fetches nothing again.
func TestGatherRecoversAfterARestart(t *testing.T) {
	t.Parallel()
	k := fakekube.New(nil)
	bd := plainBD("restart")
	before := installedBeforeRestart(t, k, bd)

	k.Reset()
	fetcher := &fakeFetcher{files: plainFiles("one")}
	restarted := New(k.Client, testCfg, fetcher, &fakeAPIs{})
	after, sc, stop := gather(t, restarted, bd)
	if n, _ := fetcher.counts(); n != 0 {
		t.Errorf("the restarted adapter fetched %d times", n)
	}
	if stop || !cmp.Equal(after.Packed(), before.Packed()) {
		t.Errorf("recovered content (-before +after):\n%s", cmp.Diff(before.Packed(), after.Packed()))
	}
	if !cmp.Equal(sc.Facts.Fetched, before.Resolved) {
		t.Errorf("facts.Fetched = %+v, want %+v", sc.Facts.Fetched, before.Resolved)
	}
	k.ExpectWrites(t, "the recovery")

	// The App describes generation 1 only.
	next := bd.DeepCopy()
	next.Generation = 2
	if _, _, _ = gather(t, New(k.Client, testCfg, fetcher, &fakeAPIs{}), next); fetcher.fetches != 1 {
		t.Errorf("generation 2 after a restart: %d fetches, want 1", fetcher.fetches)
	}
}

// A recovered App whose content Secret is gone is no recovery.
func TestGatherDoesNotRecoverWithoutTheContentSecrets(t *testing.T) {
	t.Parallel()
	k := fakekube.New(nil)
	bd := plainBD("lost")
	before := installedBeforeRestart(t, k, bd)
	deleteSecret(t, k, before.Secrets[0].Name)

	fetcher := &fakeFetcher{files: plainFiles("one")}
	after, _, _ := gather(t, New(k.Client, testCfg, fetcher, &fakeAPIs{}), bd)
	if fetcher.fetches != 1 || !cmp.Equal(names(after), names(before)) {
		t.Errorf("%d fetches, secrets %v, want 1 and %v", fetcher.fetches, names(after), names(before))
	}
}

func deleteSecret(t *testing.T, k *fakekube.Cluster, name string) {
	t.Helper()
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = systemNS, name
	if err := k.Raw.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
}

// Content that is not a valid bundle is refused once: the failure is
// reported at every reconcile, and nothing is fetched again until the
// source moves. A failure a retry can fix is fetched again.
func TestGatherRemembersARefusal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		files     fetch.Files
		err       error
		kind      status.FailureKind
		message   string
		refetches bool
	}{
		{name: "a plain bundle without manifests/", files: noManifests, kind: status.BundleInvalid, message: "no manifests/ directory"},
		{name: "content the source refuses", err: fmt.Errorf("extract: %w: a path leaves the bundle", fetch.ErrInvalidContent), kind: status.SourceFailed, message: "a path leaves the bundle"},
		{name: "a transient failure", err: errors.New("connection refused"), refetches: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := fakekube.New(nil)
			fetcher := &fakeFetcher{files: tt.files, err: tt.err}
			s := New(k.Client, testCfg, fetcher, &fakeAPIs{})
			bd := plainBD("refused")
			var next time.Time
			for i := range 2 {
				sc := scopeOf(bd)
				f, o, stop := s.Gather(context.Background(), sc)
				err := o.Err
				if !stop || f.Secrets != nil {
					t.Fatalf("Gather %d: stop %v, secrets %v: refused content must not be installed", i+1, stop, f.Secrets)
				}
				if tt.refetches {
					// The second look comes within the backoff: it
					// reports the failure remembered, with the same next
					// attempt, and fetches nothing.
					var later *fetch.RetryLater
					if !errors.As(err, &later) || later.Remembered != (i == 1) || (i == 1 && !later.Next.Equal(next)) || !errors.Is(err, tt.err) {
						t.Fatalf("Gather %d: %#v, want the transient failure to retry at its backoff's time", i+1, err)
					}
					next = later.Next
					if f := scope.FailureOf(err); !f.Retrying || !f.NextAttempt.Equal(next) {
						t.Fatalf("Gather %d: failure %+v does not name its next attempt", i+1, f)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Gather %d: %v: a refusal is reported, not retried", i+1, err)
				}
				if fl := o.Failure; fl == nil || fl.Kind != tt.kind || fl.Retrying || !strings.Contains(fl.Message, tt.message) {
					t.Fatalf("Gather %d: failure %+v, want kind %v with %q", i+1, fl, tt.kind, tt.message)
				}
			}
			if n, _ := fetcher.counts(); n != 1 {
				t.Errorf("fetched %d times, want once", n)
			}
			if tt.refetches {
				// kapp-controller-config changed: the next look fetches.
				s.RetryFetchesNow()
				s.Gather(context.Background(), scopeOf(bd))
				if n, _ := fetcher.counts(); n != 2 {
					t.Errorf("after RetryFetchesNow fetched %d times in all, want 2", n)
				}
			}
			if got := contentSecrets(t, k.Raw, systemNS, bd.Name); len(got) != 0 {
				t.Errorf("refused content was stored: %v", got)
			}
		})
	}
}

// A content Secret deleted by hand is fetched and made again.
func TestGatherRestoresADeletedContentSecret(t *testing.T) {
	t.Parallel()
	k, fetcher, s := storeOf(plainFiles("one"))
	bd := plainBD("deleted")
	first, _, _ := gather(t, s, bd)
	name := first.Secrets[0].Name
	deleteSecret(t, k, name)

	k.Reset()
	again, _, stop := gather(t, s, bd)
	if n, _ := fetcher.counts(); n != 2 || stop || !cmp.Equal(names(again), names(first)) {
		t.Fatalf("%d fetches, stop %v, secrets %v, want 2, false, %v", n, stop, names(again), names(first))
	}
	if k.Index(fakekube.Create, "Secret", name) < 0 {
		t.Errorf("the deleted Secret %s was not created again: writes %v", name, k.Writes())
	}
	err := k.Raw.Get(context.Background(), client.ObjectKey{Namespace: systemNS, Name: name}, &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		t.Errorf("content Secret %s is still missing", name)
	}
}
