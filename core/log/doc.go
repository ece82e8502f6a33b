// Package log sets up zap for Fennec and writes one access-log line per HTTP
// request.
//
// The logger prints a human console format on a terminal and JSON otherwise.
// The access log records method, path (never the query string, which may carry
// a private_token), status, duration, the operation and the user id; tokens and
// passwords never reach it. RequestInfo is the per-request record that the
// layers below fill in (the API names the operation, auth names the user) and
// that the access log and metrics read when the response is done.
//
// It imports no other Fennec package.
package log
