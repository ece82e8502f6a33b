package web_test

import (
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/web"
)

// TestCIStatus: a status's word and class are GitLab's for the known
// statuses and "unknown" for anything else, so that no text from
// elsewhere becomes a class name or a word of the icon.
func TestCIStatus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ status, label, class string }{
		{"success", "passed", "ci-success"},
		{"failed", "failed", "ci-failed"},
		{"running", "running", "ci-running"},
		{"waiting_for_resource", "waiting", "ci-waiting_for_resource"},
		{"manual", "manual", "ci-manual"},
		{"", "unknown", "ci-unknown"},
		{`"><script>`, "unknown", "ci-unknown"},
	} {
		st := web.CIStatus{Status: c.status}
		if st.Label() != c.label || st.Class() != c.class {
			t.Errorf("%q: %q %q, want %q %q", c.status, st.Label(), st.Class(), c.label, c.class)
		}
		if icon := string(st.Icon()); !strings.HasPrefix(icon, `<svg class="ci-icon"`) || !strings.Contains(icon, `aria-hidden="true"`) ||
			strings.Contains(icon, "<script") {
			t.Errorf("%q: icon %s", c.status, icon)
		}
	}
}
