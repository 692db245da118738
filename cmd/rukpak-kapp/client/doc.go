// Package client does the work of rukpak-kapp's commands, without cobra
// and without printing: the checks of `check` (Check), the take-over plan
// of `migrate plan` (PlanMigration), the upgrade plan of `upgrade plan`
// (PlanUpgrade), render's rendering with the user's registry credentials
// (Render, RenderPackage), and a catalog's publishing, images locks and
// push as a package repository (PublishCatalogDir, PublishCatalogImage,
// LockImages, PushRepository). Every registry request it makes takes the
// user's credentials as docker finds them, chosen in registry.go only.
package client
