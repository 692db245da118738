// Package certs makes the serving certificates of converted webhooks: a CA
// per install and a certificate per webhook Service, so no cert-manager is
// needed; the adapter's own webhook server (adapter/webhooks) makes
// and renews its CA and certificate with it too. The clock is an argument;
// nothing here reads the time.
//
// It imports nothing of the module.
package certs
