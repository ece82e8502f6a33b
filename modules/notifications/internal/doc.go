// Package internal implements the notifications module: settings (store,
// API), recipients, the mail queue and its sender.
package internal
