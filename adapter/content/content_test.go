package content

import (
	"bytes"
	"strings"
	"testing"
)

func TestPack_GroupsByDirectoryWithStableNames(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"manifests/":         nil,
		"manifests/a.yaml":   []byte("a"),
		"manifests/b.json":   []byte("b"),
		"manifests/x/c.yaml": []byte("c"),
		"README":             []byte("r"),
	}
	first, err := Pack("bd", files)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := Pack("bd", files)
	if len(first) != 3 {
		t.Fatalf("want 3 chunks (., manifests, manifests/x), got %d", len(first))
	}
	for i := range first {
		if first[i].Name != second[i].Name || first[i].Dir != second[i].Dir {
			t.Errorf("chunk %d not stable: %+v vs %+v", i, first[i], second[i])
		}
		if !strings.HasPrefix(first[i].Name, "bd-content-") {
			t.Errorf("chunk name %q", first[i].Name)
		}
	}
	if first[1].Dir != "manifests" || len(first[1].Data) != 2 {
		t.Errorf("manifests chunk = %+v", first[1])
	}
	changed, _ := Pack("bd", map[string][]byte{"manifests/a.yaml": []byte("A"), "manifests/b.json": []byte("b")})
	if changed[0].Name == first[1].Name {
		t.Error("new content kept the old name")
	}
}

func TestPack_SizeBoundaries(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("x"), MaxSecretBytes/2+1)
	chunks, err := Pack("bd", map[string][]byte{"m/a": big, "m/b": big, "m/c": []byte("small")})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 2 {
		t.Fatalf("two files just over half the budget need two Secrets, got %d", len(chunks))
	}
	for _, c := range chunks {
		size := 0
		for _, d := range c.Data {
			size += len(d)
		}
		if size > MaxSecretBytes {
			t.Errorf("chunk %s holds %d bytes, over %d", c.Name, size, MaxSecretBytes)
		}
	}
	if _, err := Pack("bd", map[string][]byte{"m/exact": bytes.Repeat([]byte("x"), MaxSecretBytes)}); err != nil {
		t.Errorf("a file of exactly the budget must fit: %v", err)
	}
	if _, err := Pack("bd", map[string][]byte{"m/huge": bytes.Repeat([]byte("x"), MaxSecretBytes+1)}); err == nil {
		t.Error("a file over the budget must be refused")
	}
	if _, err := Pack("bd", map[string][]byte{"m/bad name.yaml": []byte("x")}); err == nil {
		t.Error("a file name that cannot be a Secret key must be refused")
	}
}
