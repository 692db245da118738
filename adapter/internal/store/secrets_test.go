package store

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func secretIn(ns, name string, labels map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func contentOf(bd string) map[string]string {
	l := translate.OwnerLabels(bd)
	l[LabelContent] = "true"
	return l
}

// Prune deletes the content Secrets of one BundleDeployment in one
// namespace that the current content does not name, and nothing else.
func TestPruneDeletesOnlySupersededContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := fakekube.New(nil,
		secretIn(systemNS, "a-current", contentOf("a")),
		secretIn(systemNS, "a-old", contentOf("a")),
		secretIn(systemNS, "a-older", contentOf("a")),
		secretIn(systemNS, "b-content", contentOf("b")),
		secretIn(systemNS, "a-not-content", translate.OwnerLabels("a")),
		secretIn("elsewhere", "a-elsewhere", contentOf("a")),
	)
	s := New(k.Client, testCfg, &fakeFetcher{}, &fakeAPIs{})
	current := &translate.Packed{Secrets: []translate.ContentSecret{{Name: "a-current", Dir: "."}}}

	if err := s.Prune(ctx, systemNS, "a", current); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, w := range k.Writes() {
		if w.Verb != fakekube.Delete {
			t.Errorf("Prune wrote %v", w)
		}
		deleted = append(deleted, w.Namespace+"/"+w.Name)
	}
	slices.Sort(deleted)
	if want := []string{systemNS + "/a-old", systemNS + "/a-older"}; !cmp.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	for _, kept := range []client.ObjectKey{{Namespace: systemNS, Name: "a-current"}, {Namespace: systemNS, Name: "b-content"},
		{Namespace: systemNS, Name: "a-not-content"}, {Namespace: "elsewhere", Name: "a-elsewhere"}} {
		if err := k.Raw.Get(ctx, kept, &corev1.Secret{}); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}

	// No current content: all of a's go.
	if err := s.Prune(ctx, systemNS, "a", nil); err != nil {
		t.Fatal(err)
	}
	if got := contentSecrets(t, k.Raw, systemNS, "a"); len(got) != 0 {
		t.Errorf("left %v", got)
	}
}
