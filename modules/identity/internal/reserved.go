package internal

import "strings"

// reservedNamespaces are the top-level paths a user or group may not take:
// the first segment of the host's own routes (GitLab's web UI and API,
// which clients and links expect, and Fennec's /api/v4 and /-/...), and the
// files a web server answers at the root. A namespace called like one would
// be shadowed by the route, or shadow it. Compared case-insensitively.
var reservedNamespaces = map[string]bool{}

func init() {
	for _, p := range strings.Fields(`
		- .well-known 404.html 422.html 500.html 502.html 503.html
		abuse_reports admin all api apple-touch-icon.png apple-touch-icon-precomposed.png
		assets autocomplete ci dashboard deploy.html explore favicon.ico favicon.png files
		groups health_check help import invites jwt login logout notification_settings oauth
		profile projects public robots.txt s search sent_notifications slash-command-logo.png
		snippets u unsubscribes uploads users`) {
		reservedNamespaces[p] = true
	}
}

// ReservedNamespace reports whether path may not name a user or a group.
func ReservedNamespace(path string) bool { return reservedNamespaces[strings.ToLower(path)] }

// reservedName is the validation text for a reserved path, GitLab's words.
func reservedName(path string) string { return path + " is a reserved name" }
