package bdtest

import (
	"context"
	"fmt"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive // Ginkgo's DSL reads best unqualified.
	. "github.com/onsi/gomega"    //nolint:revive // as does Gomega's.
	"github.com/onsi/gomega/types"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// rukpak's first API (v1alpha1): BundleDeployments with a template, and
// the Bundles they generate.

// V1alpha1BD creates a BundleDeployment of rukpak's first API whose template
// has class and source; its own class is the one rukpak v0.16 wired for the
// template's (core-rukpak-io-plain for registry+v1). It is deleted, and its
// deletion waited for, when the spec ends. The first create retries while
// the adapter's conversion webhook is not yet trusted (its CA is written
// when the adapter starts).
func V1alpha1BD(ctx context.Context, name, class string, src rukpakv1alpha1.BundleSource, mutate ...func(*rukpakv1alpha1.BundleDeployment)) *rukpakv1alpha1.BundleDeployment {
	bd := &rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{
			ProvisionerClassName: rukpakv1alpha1.OwnClassFor(class),
			Template:             rukpakv1alpha1.BundleTemplate{Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: class, Source: src}},
		},
	}
	for _, m := range mutate {
		m(bd)
	}
	EventuallyWithOffset(1, func() error { return env.Client.Create(ctx, bd.DeepCopy()) }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
	DeferCleanup(DeleteAndWait, bd.Name)
	return bd
}

// V1alpha1Image is an image source at v1alpha1.
func V1alpha1Image(ref string) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: ref}}
}

// GetV1alpha1BD reads a BundleDeployment at v1alpha1, for Eventually.
func GetV1alpha1BD(ctx context.Context, name string) func() (*rukpakv1alpha1.BundleDeployment, error) {
	return func() (*rukpakv1alpha1.BundleDeployment, error) {
		bd := &rukpakv1alpha1.BundleDeployment{}
		return bd, env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)
	}
}

// UpdateV1alpha1BD changes a BundleDeployment at v1alpha1, retrying on conflicts.
func UpdateV1alpha1BD(ctx context.Context, name string, change func(*rukpakv1alpha1.BundleDeployment)) {
	EventuallyWithOffset(1, func() error {
		bd, err := GetV1alpha1BD(ctx, name)()
		if err != nil {
			return err
		}
		change(bd)
		return env.Client.Update(ctx, bd)
	}).WithContext(ctx).Should(Succeed())
}

// HaveV1alpha1Condition matches a v1alpha1 BundleDeployment whose condition
// t has the status, the reason and a message containing msg, for its
// current generation.
func HaveV1alpha1Condition(t string, status metav1.ConditionStatus, reason, msg string) types.GomegaMatcher {
	return WithTransform(func(bd *rukpakv1alpha1.BundleDeployment) string {
		c := apimeta.FindStatusCondition(bd.Status.Conditions, t)
		if c == nil {
			return fmt.Sprintf("no %s condition", t)
		}
		return fmt.Sprintf("%s/%s/gen-current=%v: %s", c.Status, c.Reason, c.ObservedGeneration == bd.Generation, c.Message)
	}, And(HavePrefix(fmt.Sprintf("%s/%s/gen-current=true: ", status, reason)), ContainSubstring(msg)))
}

// HaveActiveBundle matches a v1alpha1 BundleDeployment by status.activeBundle.
func HaveActiveBundle(name string) types.GomegaMatcher {
	return WithTransform(func(bd *rukpakv1alpha1.BundleDeployment) string { return bd.Status.ActiveBundle }, Equal(name))
}

// BundlesOf lists the Bundles a BundleDeployment generated (by rukpak's
// owner labels), oldest first, for Eventually.
func BundlesOf(ctx context.Context, bd string) func() ([]rukpakv1alpha1.Bundle, error) {
	return func() ([]rukpakv1alpha1.Bundle, error) {
		list := &rukpakv1alpha1.BundleList{}
		err := env.Client.List(ctx, list, client.MatchingLabels{rukpakv1alpha1.LabelOwnerKind: rukpakv1alpha1.OwnerKindBundleDeployment, rukpakv1alpha1.LabelOwnerName: bd})
		sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp) })
		return list.Items, err
	}
}

// HaveBundlePhase matches a Bundle by its phase and Unpacked condition.
func HaveBundlePhase(phase string, status metav1.ConditionStatus, reason, msg string) types.GomegaMatcher {
	return WithTransform(func(b rukpakv1alpha1.Bundle) string {
		c := apimeta.FindStatusCondition(b.Status.Conditions, rukpakv1alpha1.TypeUnpacked)
		if c == nil {
			return b.Status.Phase + ": no Unpacked condition"
		}
		return fmt.Sprintf("%s: %s/%s: %s", b.Status.Phase, c.Status, c.Reason, c.Message)
	}, And(HavePrefix(fmt.Sprintf("%s: %s/%s: ", phase, status, reason)), ContainSubstring(msg)))
}
