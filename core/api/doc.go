// Package api is Fennec's HTTP API layer: Huma v2 on a net/http ServeMux with
// the GitLab conventions of API-CONVENTIONS.md built in once.
//
// What lives here, so that no module writes it again:
//   - Register and Op (operation.go): the one way modules add an operation under
//     /api/v4, with its access rule (Public, SignedIn), token scopes, success
//     status and body limit; the caller resolved once per request through
//     auth.Resolver, before a large body is read when its credentials are in
//     the headers;
//   - parameter merging (merge.go): query + urlencoded + multipart + JSON
//     into one typed input, Rails-style keys, coercion by the operation's
//     schema, unknown keys dropped;
//   - request bodies (body.go): the size limit (413) and the read deadline
//     that cuts off a body trickling in (408);
//   - GitLab error bodies (errors.go): Error and its constructors
//     ({"message":...} / {"error":...}, Grape wording for parameter errors),
//     500s logged but never detailed to the client, and panics recovered
//     (recover.go);
//   - the one table from errors to those bodies (domainerrors.go): the
//     core's own errors (core/auth's, core/store's) are in it, and each
//     module adds its domain sentinels with MapError when it registers its
//     routes, so services return sentinels that callers test with errors.Is
//     and only this edge knows HTTP (ErrorResponse; WriteError for raw
//     handlers);
//   - pagination (page.go): page/per_page, every X-* header and Link, for a
//     known total (Paginate), an open-ended walk (PaginateOpen) and lists in
//     memory (Window);
//   - GitLab's value shapes (types.go): Time, GitTime (a commit's own
//     offset) and Date, ParseTime, ParseID for a :id that is a number or a
//     path, WriteJSON for raw handlers;
//   - what a service may ask of its request (request.go): ExternalURLFrom,
//     RequestURL, Request;
//   - the HTTP stack (api.go): New, Handler, the catch-all 404 and 405
//     answers, the OpenAPI document and docs page;
//   - raw handlers beside the API (raw.go; git smart HTTP, health): Mount and
//     Intercept, with Authenticate and Context so they resolve the caller as
//     operations do, and Alias for GitLab routes a ServeMux pattern cannot
//     hold;
//   - the access-log record of each request, the Prometheus metrics of the
//     host and their guarded handler (metrics.go), and the readiness flag.
//
// It imports core/auth, core/log, core/store (for the errors its table
// maps) and core/isotime (the date forms of parameters), and no module; settings arrive as Options, not core/config. The
// architecture test enforces the list.
package api
