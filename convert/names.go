package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// maxNameLength keeps generated names valid as DNS labels too.
const maxNameLength = 63

// nameFor joins base and a hash of parts, cutting base so that the whole,
// separator included, fits maxNameLength and never ends in '-' or '.'
// before the hash.
func nameFor(base string, parts ...any) string {
	data, _ := json.Marshal(parts)
	sum := sha256.Sum256(data)
	suffix := hex.EncodeToString(sum[:])[:10]
	room := maxNameLength - len(suffix) - 1
	if len(base) > room {
		base = base[:room]
	}
	base = strings.TrimRight(base, "-.")
	if base == "" {
		return suffix
	}
	return base + "-" + suffix
}
