package appmode

import (
	"context"
	"slices"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// Finalize deletes the App once, and says gone only when there is none.
func TestFinalizeDeletesTheAppOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bd := imageBD("web")
	k := fakekube.New(nil, bd.DeepCopy())
	installed(t, k, bd)
	m := mode(t, k)
	k.Reset()
	for i := range 2 {
		gone, err := m.Finalize(ctx, scopeOf(bd, read(t, k, appOf("web"))))
		if err != nil || gone {
			t.Fatalf("Finalize %d: gone %v, err %v, with the App still there", i+1, gone, err)
		}
	}
	if got := k.Wrote(); !slices.Equal(got, []string{"delete App " + systemNS + "/web"}) {
		t.Errorf("wrote %v, want one delete", got)
	}
	if gone, err := m.Finalize(ctx, scopeOf(bd, nil)); err != nil || !gone {
		t.Errorf("without an App: gone %v, err %v", gone, err)
	}
}
