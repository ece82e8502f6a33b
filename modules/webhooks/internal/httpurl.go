package internal

import "github.com/fennec-forge/fennec/core/api"

// ExternalURL is how clients reach the server (the HTTP server knows:
// NewExternalURL), for the URLs in payloads built in the background.
type ExternalURL func() string

// NewExternalURL is the service's ExternalURL: the API's.
func NewExternalURL(a *api.API) ExternalURL { return a.ExternalURL }
