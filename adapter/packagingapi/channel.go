package packagingapi

import (
	"context"
	"fmt"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// Channel reads the graph of the channel whose Packages are named refName
// in namespace from kapp-controller's API itself, which applies its own
// rules of what a namespace sees (the global packaging namespace's
// Packages added): for a command that has no cache (`rukpak-kapp upgrade
// plan`); the adapter reads through Packages, which applies the same
// rules to its cache, and makes nodes the same way. Every
// Package of a catalog entry is a node, an edge of the graph; one whose
// image or images lock cannot be read is a node without them, and
// unreadable says which and why: a move that needs its image is refused
// naming it, one that only passes it by is not. err is a list that failed
// (Error's words when the API is not available).
func Channel(ctx context.Context, reader client.Reader, namespace, refName string) (nodes []catalog.Node, unreadable, err error) {
	var list datav1alpha1.PackageList
	if err := reader.List(ctx, &list, client.InNamespace(namespace), client.MatchingFields{"spec.refName": refName}); err != nil {
		return nil, nil, Error(fmt.Sprintf("list the Packages of %s in namespace %s", refName, namespace), err)
	}
	nodes, unreadable = catalog.NodesOf(list.Items)
	return nodes, unreadable, nil
}
