// Package webhooks serves the adapter's admission webhooks, the
// BundleDeployment CRD's conversion webhook and the contentURLs from every
// replica, leader or not, with a CA and serving
// certificate the adapter makes itself: no cert-manager. The certificates
// live in one Secret in the system namespace, shared by the replicas and
// rotated before they end with an overlap (see PlanCertificates); the CA
// is written into the caBundle of every registered target (the
// ValidatingWebhookConfiguration, a CRD's conversion webhook) and written
// again whenever someone changes it there.
//
// It owns the serving certificate in memory.
package webhooks
