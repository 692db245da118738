// Command privatemounts runs a program with directories bound over fixed
// paths that the program insists on, for it alone: the harness starts it in
// a new mount namespace, it makes every mount private (so nothing it binds
// shows on the host), binds each SOURCE over its TARGET and then becomes the
// program (same process id, so the harness's signals reach the program). It
// needs root, as mount namespaces do.
//
// usage: privatemounts SOURCE:TARGET... -- PROGRAM ARGS...
//
// It imports nothing of the module.
package main
