package internal

import (
	"bytes"
	"encoding/base64"
	"io"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

type rawOutput struct {
	ContentType string `header:"Content-Type"`
	NoSniff     string `header:"X-Content-Type-Options"`
	Body        func(huma.Context)
}

// rawBlob streams a blob: text as text/plain, anything else (a NUL in the
// first 8000 bytes, as git decides) as application/octet-stream; never
// sniffed by browsers.
func rawBlob(b *object.Blob) *rawOutput {
	ct := "application/octet-stream"
	if r, err := b.Reader(); err == nil {
		head := make([]byte, 8000)
		n, _ := io.ReadFull(r, head)
		r.Close()
		if !bytes.Contains(head[:n], []byte{0}) && utf8.Valid(trimPartialRune(head[:n])) {
			ct = "text/plain; charset=utf-8"
		}
	}
	return &rawOutput{ContentType: ct, NoSniff: "nosniff", Body: func(ctx huma.Context) {
		r, err := b.Reader()
		if err != nil {
			return
		}
		defer r.Close()
		_, _ = io.Copy(ctx.BodyWriter(), r)
	}}
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of a prefix.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}
