package e2e_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// hostileImage is registry/valid's files plus one crafted tar entry, in a
// single uncompressed layer.
func hostileImage(ctx context.Context, repoTag string, hostile func(tw *tar.Writer)) string {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	root := filepath.Join(bundlesDir, "registry", "valid")
	Expect(filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})).To(Succeed())
	hostile(tw)
	_ = tw.Flush()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	Expect(err).NotTo(HaveOccurred())
	img, err := mutate.AppendLayers(empty.Image, layer)
	Expect(err).NotTo(HaveOccurred())
	ref, _, err := env.Registry.PushImage(img, repoTag)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

var _ = Describe("hostile registry+v1 bundle images", func() {
	DescribeTable("are refused with a clear message and write nothing outside",
		func(ctx context.Context, name, wantMsg string, hostile func(tw *tar.Writer)) {
			ref := hostileImage(ctx, "bundles/hostile-"+name+":v1", hostile)
			registryBD(ctx, "hostile-"+name, ref, "hostile-"+name)
			Eventually(getBD(ctx, "hostile-"+name)).Should(haveCondition("Unpacked", "False", "UnpackFailed", wantMsg))
			// The adapter unpacks in memory; nothing may appear beside its
			// working directory or at the root.
			for _, p := range []string{filepath.Join(env.Dir, "..", "x"), filepath.Join(env.Dir, "x"), "/x", "/tmp/x"} {
				_, err := os.Lstat(p)
				Expect(os.IsNotExist(err)).To(BeTrue(), "%s exists", p)
			}
		},
		Entry("a path climbing out of the root", "traversal", `archive entry "manifests/../../x" escapes the bundle root`, func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/../../x", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
			_, _ = tw.Write([]byte("x"))
		}),
		Entry("a symlink pointing outside", "symlink", `link "manifests/evil.yaml" points outside the bundle root ("/etc/passwd")`, func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/evil.yaml", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
		}),
		Entry("a hard link pointing outside", "hardlink", `points outside the bundle root ("../../x")`, func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/evil.yaml", Linkname: "../../x", Typeflag: tar.TypeLink})
		}),
		Entry("a 2 GiB sparse file", "sparse", `is 2147483648 bytes, over the limit of 8388608`, func(tw *tar.Writer) {
			// The header claims 2 GiB; the body never comes.
			_ = tw.WriteHeader(&tar.Header{Name: "manifests/huge.yaml", Mode: 0o644, Size: 2 << 30, Typeflag: tar.TypeReg})
		}),
	)
})
