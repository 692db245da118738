package reconciler_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The guard against hot loops: one failing object of every kind the adapter
// fetches for (a Bundle on its own, a v1alpha1 and a v1alpha2
// BundleDeployment, an OperatorCatalog) and every source (image, git, http),
// all at once, against the harness's real registry, git and file servers,
// which count what they receive. Over a minute each may make the attempts
// its backoff allows (fetch.RetryDelay: 1, 2, 4 … seconds, six attempts in
// the first minute) and no more, whatever its own status writes, the end of
// each fetch and the other objects' events queue; the adapter's connections
// to each server stay within fetch.MaxConnsPerServer; and each says when it
// tries next.

// observed is how long the servers are watched.
const observed = time.Minute

// attemptsInAMinute is what the backoff allows in the window, with one to
// spare for an attempt that falls on its end.
const attemptsInAMinute = 7

// perAttempt is what one failing attempt asks of a source's server under
// the object's own path: the manifest (an OperatorCatalog's look-up, a HEAD
// of it), git's ref advertisement, the archive (a ping of the registry's
// /v2/ is not under it). Measured: 6 requests each in the minute.
var perAttempt = map[string]int{"image": 1, "git": 1, "http": 1}

// nextAttempt is the time a failure's message names.
var nextAttempt = regexp.MustCompile(`next attempt at (\S+?Z)|again at (\S+?Z)`)

type failing struct {
	kind, source string
	// path is what every request of its fetch has in its path.
	path string
	// conditions reads the object's conditions.
	conditions func(ctx context.Context) ([]metav1.Condition, error)
}

var _ = Describe("nothing hot-loops", func() {
	It("asks each server only as often as the backoff allows for a failing object of every kind and source, with bounded connections, and says when it tries next", func(ctx context.Context) {
		suffix := bdtest.RandSuffix()
		servers := map[string]*harness.Traffic{"image": env.Registry.Traffic, "git": env.Git.Traffic, "http": env.Files.Traffic}
		openBefore := map[string]int{}
		for source, t := range servers {
			t.ResetPeak()
			openBefore[source] = t.Open()
		}
		var objects []failing
		for _, source := range []string{"image", "git", "http"} {
			for _, kind := range []string{"bundle", "v1alpha1", "v1alpha2"} {
				name := fmt.Sprintf("hotloop-%s-%s-%s", kind, source, suffix)
				f := failing{kind: kind, source: source, path: name}
				var v1 rukpakv1alpha1.BundleSource
				var v2 rukpakv1alpha2.BundleSource
				switch source {
				case "image":
					// A tag that does not exist: MANIFEST_UNKNOWN.
					ref := env.Registry.Host + "/" + name + ":no-such-tag"
					v1, v2 = v016Image(ref), rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}}
				case "git":
					// A repository that does not exist: 404.
					ref := rukpakv1alpha1.GitRef{Branch: "main"}
					v1 = v016Git(env.Git.URL(name), "", ref)
					v2 = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit, Git: &rukpakv1alpha2.GitSource{Repository: env.Git.URL(name), Ref: rukpakv1alpha2.GitRef{Branch: "main"}}}
				case "http":
					url := env.Files.URL("/" + name + ".tgz")
					v1, v2 = v016HTTP(url), rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}}
				}
				switch kind {
				case "bundle":
					bdtest.StandaloneBundle(ctx, name, rukpakv1alpha1.ClassPlain, v1)
					f.conditions = func(ctx context.Context) ([]metav1.Condition, error) {
						b, err := bdtest.GetBundle(ctx, name)()
						return b.Status.Conditions, err
					}
				case "v1alpha1":
					// registry+v1: a class whose content the adapter
					// fetches itself (kapp-controller fetches a plain one).
					bdtest.V1alpha1BD(ctx, name, rukpakv1alpha1.ClassRegistry, v1)
					f.conditions = func(ctx context.Context) ([]metav1.Condition, error) {
						bd, err := bdtest.GetV1alpha1BD(ctx, name)()
						if err != nil {
							return nil, err
						}
						return bd.Status.Conditions, nil
					}
				case "v1alpha2":
					bdtest.RegistryBD(ctx, name, "", name, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source = v2 })
					f.conditions = func(ctx context.Context) ([]metav1.Condition, error) {
						bd, err := bdtest.GetBD(ctx, name)()
						if err != nil {
							return nil, err
						}
						return bd.Status.Conditions, nil
					}
				}
				objects = append(objects, f)
			}
		}
		catalogName := "hotloop-catalog-" + suffix
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: catalogName}}
		Expect(env.Client.Create(ctx, ns)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, ns) })
		cat := &catalogsv1alpha1.OperatorCatalog{
			ObjectMeta: metav1.ObjectMeta{Namespace: catalogName, Name: "operators"},
			Spec:       catalogsv1alpha1.OperatorCatalogSpec{Image: env.Registry.Host + "/" + catalogName + ":no-such-tag"},
		}
		Expect(env.Client.Create(ctx, cat)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, cat) })
		objects = append(objects, failing{kind: "OperatorCatalog", source: "image", path: catalogName, conditions: func(ctx context.Context) ([]metav1.Condition, error) {
			got := &catalogsv1alpha1.OperatorCatalog{}
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(cat), got)
			return got.Status.Conditions, err
		}})

		By("every one failing within seconds, saying when it tries next")
		for _, f := range objects {
			Eventually(f.conditions).WithContext(ctx).WithTimeout(10*time.Second).Should(ContainElement(HaveField("Message", MatchRegexp(nextAttempt.String()))),
				"%s from %s", f.kind, f.source)
		}

		By(fmt.Sprintf("watching the servers for %s", observed))
		// The window is what is measured (requests per minute), not a wait
		// for something to happen.
		select {
		case <-time.After(observed):
		case <-ctx.Done():
			Fail("interrupted")
		}

		By("at most the attempts the backoff allows, for each object")
		var counts []string
		for _, f := range objects {
			n := servers[f.source].Requests(f.path)
			counts = append(counts, fmt.Sprintf("%s/%s %d", f.kind, f.source, n))
			Expect(n).To(BeNumerically(">=", 2), "%s from %s: it was tried again", f.kind, f.source)
			Expect(n).To(BeNumerically("<=", attemptsInAMinute*perAttempt[f.source]),
				"%s from %s: requests in %s (all: %s)", f.kind, f.source, observed, strings.Join(counts, ", "))
		}
		GinkgoWriter.Printf("requests in %s: %s\n", observed, strings.Join(counts, ", "))

		By("the adapter's connections to each server bounded")
		for source, t := range servers {
			GinkgoWriter.Printf("%s server: %d connections open at most, %d before, %d now\n", source, t.Peak(), openBefore[source], t.Open())
			Expect(t.Peak()-openBefore[source]).To(BeNumerically("<=", fetch.MaxConnsPerServer), "connections to the %s server", source)
		}

		By("each one's next attempt is still to come, or just came")
		now := time.Now()
		for _, f := range objects {
			conds, err := f.conditions(ctx)
			Expect(err).NotTo(HaveOccurred())
			var next time.Time
			for _, c := range conds {
				if m := nextAttempt.FindStringSubmatch(c.Message); m != nil {
					next, err = time.Parse(time.RFC3339, m[1]+m[2])
					Expect(err).NotTo(HaveOccurred())
				}
			}
			Expect(next).To(BeTemporally(">", now.Add(-5*time.Second)), "%s from %s: %v", f.kind, f.source, conds)
			Expect(next).To(BeTemporally("<", now.Add(fetch.RetryMax+5*time.Second)), "%s from %s", f.kind, f.source)
		}
	})
})
