package adapter

import (
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/servemode"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
)

// Names of what the adapter writes.
const (
	// Finalizer holds a BundleDeployment until everything it installed is gone.
	Finalizer = kube.Finalizer
	// LabelContent marks the content Secrets the adapter fetched.
	LabelContent = store.LabelContent
	// LabelMirror marks copies of referenced Secrets and ConfigMaps.
	LabelMirror = kube.LabelMirror
	// LabelPackageValues marks the values Secrets of served Packages.
	LabelPackageValues = servemode.LabelPackageValues
	// PackagingAPIService is the APIService of kapp-controller's packaging
	// API, which the serve mode and the catalogs write through.
	PackagingAPIService = packagingapi.APIService
	// PackagingGlobalNamespace is the global packaging namespace of
	// kapp-controller's release, whose Packages every namespace sees.
	PackagingGlobalNamespace = packagingapi.DefaultGlobalNamespace
)

// InstalledSelector selects what kapp installed for any BundleDeployment.
var InstalledSelector = kube.InstalledSelector
