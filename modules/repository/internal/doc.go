// Package internal implements the repository module. Only
// modules/repository may import it.
package internal
