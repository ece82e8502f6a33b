package api

import (
	"context"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
)

// Pagination limits of API-CONVENTIONS.md.
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
	// MaxPage is the highest page served; larger page numbers are clamped to
	// it. No list comes near it (2^31 pages of 100), and keeping the page
	// far from the int range lets page+1 and the Link arithmetic never wrap.
	MaxPage = math.MaxInt32
)

// PageParams is embedded in the input of every list operation.
type PageParams struct {
	Page    int `query:"page" doc:"Page number (default 1)"`
	PerPage int `query:"per_page" doc:"Items per page (default 20, at most 100)"`
}

// Norm returns the page and per_page actually used: page below 1 is 1,
// above MaxPage is MaxPage; per_page below 1 is the default, above 100 is
// clamped to 100.
func (p PageParams) Norm() (page, perPage int) {
	page, perPage = min(max(p.Page, 1), MaxPage), p.PerPage
	if perPage < 1 {
		perPage = DefaultPerPage
	}
	if perPage > MaxPerPage {
		perPage = MaxPerPage
	}
	return page, perPage
}

// Offset is how many items come before the page. It is the one place list
// offsets are computed: it never overflows (a page beyond any list gives
// math.MaxInt, which every window and scan treats as past the end), so no
// module multiplies page numbers itself.
func (p PageParams) Offset() int {
	page, per := p.Norm()
	if page-1 > math.MaxInt/per {
		return math.MaxInt
	}
	return (page - 1) * per
}

// Limit is the page size.
func (p PageParams) Limit() int {
	_, per := p.Norm()
	return per
}

// HeaderText is a header value that is sent even when empty (GitLab sends
// "X-Prev-Page:" on the first page). Huma skips empty strings but calls
// String() on other types.
type HeaderText struct{ V string }

func (h HeaderText) String() string { return h.V }

// PageHeaders is embedded in the output of every list operation.
type PageHeaders struct {
	Total      *int       `header:"X-Total"`
	TotalPages *int       `header:"X-Total-Pages"`
	PerPage    int        `header:"X-Per-Page"`
	Page       int        `header:"X-Page"`
	NextPage   HeaderText `header:"X-Next-Page"`
	PrevPage   HeaderText `header:"X-Prev-Page"`
	Link       string     `header:"Link"`
}

// Paginate computes the headers for a page of a list of total items.
func Paginate(ctx context.Context, p PageParams, total int) PageHeaders {
	page, per := p.Norm()
	pages := (total + per - 1) / per
	if pages < 1 {
		pages = 1
	}
	h := PageHeaders{Total: &total, TotalPages: &pages, PerPage: per, Page: page}
	if page > 1 {
		h.PrevPage.V = strconv.Itoa(min(page-1, pages))
	}
	if page < pages {
		h.NextPage.V = strconv.Itoa(page + 1)
	}
	h.Link = links(ctx, page, per, pages, true)
	return h
}

func links(ctx context.Context, page, per, pages int, withLast bool) string {
	st := stateOf(ctx)
	if st == nil {
		return ""
	}
	base := st.api.ExternalURL() + st.req.URL.EscapedPath()
	// Keep the client's other parameters as it spelled them (name[]=a&...),
	// minus paging and secrets, which must never be echoed into a header.
	var kept []string
	for _, p := range queryPairs(st.rawQuery) {
		switch p[0] {
		case "page", "per_page", "private_token", "access_token":
			continue
		}
		kept = append(kept, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
	}
	rest := strings.Join(kept, "&")
	link := func(n int, rel string) string {
		q := "page=" + strconv.Itoa(n) + "&per_page=" + strconv.Itoa(per)
		if rest != "" {
			q += "&" + rest
		}
		return "<" + base + "?" + q + `>; rel="` + rel + `"`
	}
	var parts []string
	if page > 1 {
		parts = append(parts, link(min(page-1, pages), "prev"))
	}
	if page < pages {
		parts = append(parts, link(page+1, "next"))
	}
	parts = append(parts, link(1, "first"))
	if withLast {
		parts = append(parts, link(pages, "last"))
	}
	return strings.Join(parts, ", ")
}

// PaginateOpen is Paginate for lists whose total is not known without a
// full walk (commit history): X-Total and X-Total-Pages are left out, as
// GitLab leaves them out for large collections (an empty value is not the
// same: python-gitlab reads a present header with int() and fails on ""),
// X-Next-Page says whether more exist, and Link has no rel="last".
func PaginateOpen(ctx context.Context, p PageParams, hasMore bool) PageHeaders {
	page, per := p.Norm()
	pages := page
	if page == MaxPage {
		hasMore = false // no page number beyond the last one served
	}
	if hasMore {
		pages = page + 1
	}
	h := PageHeaders{PerPage: per, Page: page}
	if page > 1 {
		h.PrevPage.V = strconv.Itoa(page - 1)
	}
	if hasMore {
		h.NextPage.V = strconv.Itoa(page + 1)
	}
	h.Link = links(ctx, page, per, pages, false) // no known last page
	return h
}

// Window returns the part of items that falls on the page; for lists already
// held in memory.
func Window[T any](items []T, p PageParams) []T {
	return store.Window(items, p.Offset(), p.Limit())
}
