// Package api is Fennec's HTTP API layer: Huma v2 on a net/http ServeMux with
// the GitLab conventions of API-CONVENTIONS.md built in once.
//
// What lives here, so that no module writes it again:
//   - Register: the one way modules add an operation (under /api/v4, with its
//     access rule and token scopes);
//   - parameter merging: query + urlencoded + multipart + JSON into one typed
//     input, Rails-style keys, coercion by the operation's schema, unknown keys
//     dropped, body size limit;
//   - GitLab error bodies ({"message":...} / {"error":...}, Grape wording for
//     parameter errors, one table mapping domain errors to statuses, 500s
//     logged but never detailed to the client, panics recovered);
//   - pagination (page/per_page, every X-* header and Link);
//   - the Time and Date types that render GitLab's timestamps;
//   - the catch-all 404 and 405 answers, access log and metrics around it all;
//   - Mount and Intercept, for raw handlers such as git smart HTTP.
//
// It imports core/auth, core/log and core/config, and no module.
package api
