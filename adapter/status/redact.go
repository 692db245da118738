package status

import (
	"net/url"
	"regexp"
	"strings"
)

// urlInText finds URLs in free text (vendir's, git's and Go's errors quote
// the URL they failed on).
var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>` + "`" + `]+`)

// secretParam names query parameters that carry credentials: tokens, keys,
// and the signatures and credentials of pre-signed URLs (S3, GCS, Azure SAS).
var secretParam = regexp.MustCompile(`(?i)token|sig|credential|secret|passw|key|auth|session|code`)

// Redact removes credentials from every URL in text: the user information
// (user:password@ or token@) and the values of query parameters that carry
// tokens or signatures. Conditions, Events and logs only ever print text
// that went through it.
func Redact(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlInText.ReplaceAllStringFunc(text, RedactURL)
}

// RedactURL is u without credentials; text that does not parse as a URL is
// returned with anything before an '@' in its authority masked.
func RedactURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		scheme, rest, ok := strings.Cut(u, "://")
		if at := strings.Index(rest, "@"); ok && at >= 0 && !strings.Contains(rest[:at], "/") {
			return scheme + "://***@" + rest[at+1:]
		}
		return u
	}
	changed := false
	if parsed.User != nil {
		parsed.User = url.User("***")
		changed = true
	}
	if parsed.RawQuery != "" {
		q := parsed.Query()
		for k := range q {
			if secretParam.MatchString(k) {
				q[k] = []string{"***"}
				changed = true
			}
		}
		if changed {
			parsed.RawQuery = q.Encode()
		}
	}
	if !changed {
		return u
	}
	return strings.Replace(parsed.String(), "%2A%2A%2A", "***", -1)
}
