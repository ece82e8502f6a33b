package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the key's file name in the data directory.
const KeyFile = "secret.key"

// prefix marks a sealed value; v1 is AES-256-GCM with a 12-byte random nonce.
const prefix = "sealed:v1:"

// ErrCorrupt is returned for a sealed value that does not open: damaged, or
// sealed under another key (secret.key was replaced).
var ErrCorrupt = errors.New("sealed: value cannot be opened (damaged, or sealed under another secret.key)")

// Box seals and opens values under one key. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("sealed: the key must be 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Open returns the Box of a data directory, creating its key on first use.
func Open(dataDir string) (*Box, error) {
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKey(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err = createKey(dataDir, path)
	}
	if err != nil {
		return nil, err
	}
	return New(key)
}

func readKey(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("sealed: %s does not hold a key (64 hex digits)", path)
	}
	return key, nil
}

// createKey writes a new key to a temporary file and links it into place,
// so a concurrent start never reads a half-written key: whoever links first
// wins and the other reads the winner's key.
func createKey(dataDir, path string) ([]byte, error) {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dataDir, ".secret.key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600, before any byte of the key is in it.
	_, err = tmp.WriteString(hex.EncodeToString(key) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("sealed: write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
		return readKey(path)
	} else if err != nil {
		return nil, fmt.Errorf("sealed: create %s: %w", path, err)
	}
	if d, err := os.Open(dataDir); err == nil {
		_ = d.Sync() // the new name survives a crash
		d.Close()
	}
	return key, nil
}

// Seal encrypts plain for purpose (a label such as "projects.hook.token",
// bound to the ciphertext so a value cannot be moved to another field). An
// empty value stays empty: nothing to hide, and "not set" stays visible.
func (b *Box) Seal(plain, purpose string) string {
	if plain == "" {
		return ""
	}
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic("sealed: no randomness: " + err.Error()) // crypto/rand does not fail on supported systems
	}
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return prefix + base64.RawStdEncoding.EncodeToString(out)
}

// Unseal decrypts a value Seal made for the same purpose. A value that is
// not sealed (a record from before sealing) is returned unchanged.
func (b *Box) Unseal(value, purpose string) (string, error) {
	rest, ok := strings.CutPrefix(value, prefix)
	if !ok {
		return value, nil
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	n := b.aead.NonceSize()
	if err != nil || len(raw) < n+b.aead.Overhead() {
		return "", ErrCorrupt
	}
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(purpose))
	if err != nil {
		return "", ErrCorrupt
	}
	return string(plain), nil
}

// IsSealed reports whether value is a sealed one (as opposed to a plain
// value from before sealing, or empty).
func IsSealed(value string) bool { return strings.HasPrefix(value, prefix) }
