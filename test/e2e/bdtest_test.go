package e2e_test

import "github.com/rukpak-kapp/rukpak-kapp/test/bdtest"

// The builders and matchers shared with the reconciler suite.
var (
	plainBD         = bdtest.PlainBD
	helmBD          = bdtest.HelmBD
	registryBD      = bdtest.RegistryBD
	httpBD          = bdtest.HTTPBD
	gitBD           = bdtest.GitBD
	configMapsBD    = bdtest.ConfigMapsBD
	configMapFrom   = bdtest.ConfigMapFrom
	deleteAndWait   = bdtest.DeleteAndWait
	getBD           = bdtest.GetBD
	mustBD          = bdtest.MustBD
	haveCondition   = bdtest.HaveCondition
	getApp          = bdtest.GetApp
	randSuffix      = bdtest.RandSuffix
	basicAuthSecret = bdtest.BasicAuthSecret
	dirBundle       = bdtest.DirBundle
	hostileImage    = bdtest.HostileImage
)
