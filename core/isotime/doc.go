// Package isotime reads the ISO 8601 dates and times GitLab clients send in
// parameters (created_at, due_date, expires_at, since/until...): a full
// RFC 3339 time, one without a zone, one with a space for the T, or a
// date. The HTTP layer (core/api) and module services, which may not
// import it, read them by the same rule from here.
//
// It imports only the standard library and knows no module.
package isotime
