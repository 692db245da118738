// Package rbacmatrix is what the adapter's account (config/rbac) may and
// may not do, row by row: the API suite asks each row of a real
// kube-apiserver as a SubjectAccessReview, and the docs' test keeps
// docs/install.md's permissions table equal to it (Table).
package rbacmatrix
