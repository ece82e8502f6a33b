// Package internal implements the projects module: its tables, the access
// rules, the service and the HTTP operations. Only modules/projects may
// import it.
package internal
