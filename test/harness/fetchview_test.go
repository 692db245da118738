package harness

import "testing"

func TestHostsServing(t *testing.T) {
	machine := "127.0.0.1\tlocalhost\n::1 localhost ip6-localhost ip6-loopback\n10.0.0.5 build-host # this machine\n"
	got := hostsServing([]byte(machine), map[string]string{"localhost": "127.9.9.1", "github.com": "127.9.9.2"})
	want := "# served by the harness instead: 127.0.0.1\tlocalhost\n" +
		"# served by the harness instead: ::1 localhost ip6-localhost ip6-loopback\n" +
		"10.0.0.5 build-host # this machine\n" +
		"\n# served on loopback by the rukpak-kapp test harness\n" +
		"127.9.9.2 github.com\n127.9.9.1 localhost\n"
	if got != want {
		t.Fatalf("hosts:\n%s\nwant:\n%s", got, want)
	}
}
