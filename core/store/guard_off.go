//go:build !race && !fennec_txguard

package store

const guardOn = false
