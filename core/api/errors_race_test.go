package api_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/core/api"
)

// Package-level errors (a module's "404 Project Not Found") are answered to
// many requests at once: reading their headers must not write into them.
// Under -race this failed while GetHeaders filled in a nil map.
func TestSharedErrorIsReadOnly(t *testing.T) {
	shared := api.NotFound("Project")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 100; j++ {
				if h := shared.GetHeaders(); len(h) != 0 {
					t.Errorf("headers of a plain 404: %v", h)
					return
				}
				if shared.GetStatus() != http.StatusNotFound {
					t.Error("status changed")
					return
				}
			}
		})
	}
	wg.Wait()
	if shared.Header != nil {
		t.Error("GetHeaders wrote into the shared error")
	}
}
