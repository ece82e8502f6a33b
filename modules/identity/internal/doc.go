// Package internal implements the identity module: its tables, service and
// HTTP operations. Only modules/identity may import it.
package internal
