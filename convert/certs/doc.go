// Package certs makes the serving certificates of converted webhooks: a CA
// per install and a certificate per webhook Service, so no cert-manager is
// needed. The clock is an argument; nothing here reads the time.
//
// It imports nothing of the module.
package certs
