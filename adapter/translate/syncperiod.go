package translate

import "time"

// syncJitter is the share of a configured sync period by which Apps are
// spread: every App re-syncs once in [period, period·(1+1/syncJitter)).
// kapp-controller itself adds at most 5 s, so Apps created together in a
// large install would otherwise all come due together a period later, in
// the middle of the install or of each other's re-syncs.
const syncJitter = 4

// jittered spreads period by a fraction of it that depends only on the
// App's name, in whole seconds, so the App spec stays byte-stable from one
// reconcile (and one adapter) to the next.
func jittered(period time.Duration, name string) time.Duration {
	spread := int64(period/syncJitter) / int64(time.Second)
	if spread <= 0 {
		return period
	}
	return period + time.Duration(int64(nameHash(name))%spread)*time.Second
}
