// Package plan decides what an OperatorInstall does and says, without a
// client or a clock: from the install's spec, the BundleDeployment it
// writes (as the cache has it) and its channel's Packages (as its
// namespace sees them), which bundle the BundleDeployment installs now
// (Decide: the version asked for, the next step of a walk along the
// channel's shortest path, or the version installed while a move is held,
// refused or gated on a step's health), what that BundleDeployment looks
// like (BundleDeployment), and the OperatorInstall's status (Status: the
// version installed and asked, the walk, the hold, the update notice, the
// dependencies, the health roll-up, each condition at the generation it
// describes).
//
// What runs is read from the BundleDeployment: the bundle it names once it
// is installed at its generation and, for a walk's step, past its health
// gate. The status records it (status.installed) so that the next look
// knows what ran before a step under way; the status is written before
// the BundleDeployment moves to another bundle, so a restart between the
// two writes reads the same.
//
// It owns no state.
package plan
