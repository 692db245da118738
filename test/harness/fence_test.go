package harness

import (
	"net/http"
	"testing"
)

// A fenced registry refuses every request and counts it, so a suite that
// expects none asked it can tell.
func TestRegistryFence(t *testing.T) {
	r, err := StartRegistry("", "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	get := func() int {
		resp, err := http.Get("http://" + r.Host + "/v2/")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusOK || r.FencedOff() != 0 {
		t.Fatalf("before the fence: %d, %d refused", code, r.FencedOff())
	}
	r.Fence()
	if code := get(); code != http.StatusServiceUnavailable || r.FencedOff() != 1 {
		t.Fatalf("behind the fence: %d, %d refused", code, r.FencedOff())
	}
}
