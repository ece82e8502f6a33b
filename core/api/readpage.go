package api

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
)

// ReadPage answers a list in one read of db: list reads a page of records
// (with the transaction's context, which the service's reads join) and
// how many there are in all, render turns the page into the views the
// client gets, in the same read. The headers are p's paging of the total.
// Modules whose services return records and whose adapters render them
// (issues, merge requests) list this way.
func ReadPage[R, V any](ctx context.Context, db *store.DB, p PageParams, list func(ctx context.Context) ([]R, int, error),
	render func(tx *store.Tx, page []R) ([]V, error)) (PageHeaders, []V, error) {
	var h PageHeaders
	var out []V
	err := db.View(ctx, func(tx *store.Tx) error {
		recs, total, err := list(tx.Context())
		if err != nil {
			return err
		}
		h = Paginate(ctx, p, total)
		out, err = render(tx, recs)
		return err
	})
	return h, out, err
}

// BaseURL is the external URL for the links of an answer: the request's
// (ExternalURLFrom), else fallback's (work done outside a request).
func BaseURL(ctx context.Context, fallback func() string) string {
	if base := ExternalURLFrom(ctx); base != "" {
		return base
	}
	return fallback()
}
