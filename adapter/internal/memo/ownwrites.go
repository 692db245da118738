package memo

// OwnWrites remembers, per object name, the resourceVersion the
// controller's last status write replaced. While the informer cache still
// holds that version it has not seen the write, and a look would act on
// the status as it was before: compute it again and write over it, a
// write the optimistic lock refuses. The write's own update event brings
// the object back once the cache has it. The zero value is empty and
// ready.
type OwnWrites struct{ Keyed[string] }

// Wrote records a status write of name that replaced the version replaced
// and left the version now; a write that patched nothing (now ==
// replaced) leaves nothing to wait for.
func (w *OwnWrites) Wrote(name, replaced, now string) {
	if now != replaced {
		w.Store(name, replaced)
	}
}

// Behind says whether version, as the cache holds name, is the one the
// last status write replaced; a newer one ends the memory.
func (w *OwnWrites) Behind(name, version string) bool {
	replaced, ok := w.Load(name)
	if !ok {
		return false
	}
	if replaced == version {
		return true
	}
	w.Delete(name)
	return false
}
