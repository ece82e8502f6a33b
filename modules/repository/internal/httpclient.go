package internal

// The importer's outbound HTTP: git's smart HTTP client for an import from
// an http(s) URL, every connection through the guard (netguard). It is the
// one place the import speaks HTTP, beside the adapter's files, so the
// import itself (import.go) stays transport-neutral.

import (
	"net/http"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/fennec-forge/fennec/core/netguard"
)

// guardedHTTP is an HTTP client whose connections the guard checks.
type guardedHTTP struct{ client *http.Client }

func newGuardedHTTP(guard *netguard.Guard) *guardedHTTP {
	return &guardedHTTP{client: &http.Client{Transport: guard.Transport()}}
}

// uploadPackSession opens an upload-pack session with the source at ep.
func (g *guardedHTTP) uploadPackSession(ep *transport.Endpoint) (transport.UploadPackSession, error) {
	return githttp.NewClient(g.client).NewUploadPackSession(ep, nil)
}

// closeIdle closes the connections kept for reuse (the importer stops).
func (g *guardedHTTP) closeIdle() { g.client.CloseIdleConnections() }
