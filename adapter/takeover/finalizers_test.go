package takeover

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStripRukpakFinalizers(t *testing.T) {
	for _, tt := range []struct {
		name     string
		have     []string
		want     []string
		stripped bool
	}{
		{name: "none", have: nil, want: nil},
		{name: "only others", have: []string{"kubernetes", "example.com/keep"}, want: []string{"kubernetes", "example.com/keep"}},
		{name: "both of rukpak's, others kept in order", have: []string{"a", RukpakFinalizers[0], "b", RukpakFinalizers[1]}, want: []string{"a", "b"}, stripped: true},
		{name: "one of rukpak's alone", have: []string{RukpakFinalizers[1]}, want: []string{}, stripped: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &metav1.ObjectMeta{Finalizers: slices.Clone(tt.have)}
			got := StripRukpakFinalizers(o)
			if got != tt.stripped || !slices.Equal(o.Finalizers, tt.want) {
				t.Fatalf("StripRukpakFinalizers(%v) = %t, left %v; want %t, %v", tt.have, got, o.Finalizers, tt.stripped, tt.want)
			}
		})
	}
}
