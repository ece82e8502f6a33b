// Package sealed encrypts the few secrets Fennec must be able to read back,
// unlike passwords and API tokens, which are only ever compared and so are
// stored hashed: a project hook's token (sent again in X-Gitlab-Token) and
// the credentials of an import_url (used again to clone).
//
// Values are sealed with AES-256-GCM under a key kept outside the store, in
// <data dir>/secret.key (created with mode 0600 on the first start). A copy
// of fennec.db alone, a backup or a stolen file, does not reveal them; keep
// secret.key with the backups, since without it sealed values cannot be
// opened again.
//
// A sealed value is text, "sealed:v1:" followed by base64 of the nonce and
// the ciphertext, so it fits the string fields that held the plain value.
// Unseal returns a value without that prefix unchanged: records written
// before sealing keep working until they are sealed.
//
// It imports only the standard library and knows no module.
package sealed
