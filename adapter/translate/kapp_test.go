package translate

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestApp_KappOptionsAndFinalizer(t *testing.T) {
	t.Parallel()
	tuned := []string{"--wait-check-interval=250ms", "--app-changes-max-to-keep=0", "--logs=false"}
	image := imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"})
	tests := []struct {
		name  string
		class string
		want  []string
	}{
		{"plain", rukpakv1alpha2.ClassPlain, tuned},
		{"helm", rukpakv1alpha2.ClassHelm, tuned},
		{"registry+v1 may convert to no objects", rukpakv1alpha2.ClassRegistry, append(slices.Clone(tuned), "--dangerous-allow-empty-list-of-resources=true")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app, err := App(bd(tt.class, image), cfg, &Packed{})
			if err != nil {
				t.Fatalf("App: %v", err)
			}
			if len(app.Spec.Deploy) != 1 || app.Spec.Deploy[0].Kapp == nil {
				t.Fatalf("want one kapp deploy step, got %+v", app.Spec.Deploy)
			}
			if d := cmp.Diff(tt.want, app.Spec.Deploy[0].Kapp.RawOptions); d != "" {
				t.Errorf("raw options (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"finalizers.kapp-ctrl.k14s.io/delete"}, app.Finalizers); d != "" {
				t.Errorf("finalizers (-want +got):\n%s", d)
			}
		})
	}
	// Two Apps must never share the options slice: a caller that appends to
	// one would change the other.
	a, _ := App(bd(rukpakv1alpha2.ClassPlain, image), cfg, nil)
	b, _ := App(bd(rukpakv1alpha2.ClassPlain, image), cfg, nil)
	a.Spec.Deploy[0].Kapp.RawOptions[0] = "changed"
	if b.Spec.Deploy[0].Kapp.RawOptions[0] == "changed" || kappDeployOptions[0] == "changed" {
		t.Error("Apps share their raw options")
	}
}

func TestJittered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		period time.Duration
		app    string
		want   time.Duration
	}{
		{"ten minutes", 10 * time.Minute, "my-bd", 10*time.Minute + 34*time.Second},
		{"same name, same period: byte-stable", 10 * time.Minute, "my-bd", 10*time.Minute + 34*time.Second},
		{"another name", 10 * time.Minute, "other-bd", 10*time.Minute + 12*time.Second},
		{"a minute", time.Minute, "my-bd", time.Minute + 4*time.Second},
		{"too short to spread by whole seconds", 3 * time.Second, "my-bd", 3 * time.Second},
		{"zero stays zero", 0, "my-bd", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := jittered(tt.period, tt.app); got != tt.want {
				t.Errorf("jittered(%s, %q) = %s, want %s", tt.period, tt.app, got, tt.want)
			}
		})
	}
}

// TestJitteredSpreads checks the property the jitter is for: a thousand Apps
// created together come due over the whole window, not at one instant.
func TestJitteredSpreads(t *testing.T) {
	t.Parallel()
	const period = 10 * time.Minute
	buckets := make([]int, 5) // 30 s each over [10m, 12m30s)
	for i := range 1000 {
		d := jittered(period, fmt.Sprintf("rk-%04d", i))
		if d < period || d >= period+period/syncJitter || d%time.Second != 0 {
			t.Fatalf("jittered(%s) = %s: outside [%s, %s) or not whole seconds", period, d, period, period+period/syncJitter)
		}
		buckets[(d-period)/(30*time.Second)]++
	}
	for i, n := range buckets {
		if n < 150 || n > 250 {
			t.Errorf("bucket %d holds %d of 1000 Apps, want about 200: %v", i, n, buckets)
		}
	}
}
