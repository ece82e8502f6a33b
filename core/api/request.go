package api

// What a handler may read of the request behind its context (the raw
// request, its URL as the client sees it, the host's external URL), for
// operations and raw handlers alike.

import (
	"context"
	"net/http"
)

// requestState is what handlers may need from the raw request.
type requestState struct {
	api *API
	req *http.Request
	// rawQuery is the query as the client sent it, before name[] arrays
	// were normalised; Link headers echo it.
	rawQuery string
}

type stateKey struct{}

func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

// RequestURL is the absolute URL of the current request as the client sees
// it (external URL + path + query); used for Link headers.
func RequestURL(ctx context.Context) string {
	st := stateOf(ctx)
	if st == nil {
		return ""
	}
	return st.api.ExternalURL() + st.req.URL.EscapedPath()
}

// ExternalURLFrom is the host's external URL, from a handler's context.
func ExternalURLFrom(ctx context.Context) string {
	if st := stateOf(ctx); st != nil {
		return st.api.ExternalURL()
	}
	return ""
}

// Request returns the raw request behind a handler's context, or nil.
func Request(ctx context.Context) *http.Request {
	if st := stateOf(ctx); st != nil {
		return st.req
	}
	return nil
}
