package notifications_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/notifications"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// selfSigned makes a certificate for 127.0.0.1 and writes it as PEM to
// a file, the CA file Fennec is told to trust.
func selfSigned(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test mail server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, file
}

// TestSMTPTLSAndAuth: STARTTLS and implicit TLS, with a password the
// server requires; a server whose certificate is not trusted gets nothing.
func TestSMTPTLSAndAuth(t *testing.T) {
	t.Parallel()
	serverTLS, caFile := selfSigned(t)
	for _, mode := range []string{"starttls", "tls"} {
		t.Run(mode, func(t *testing.T) {
			mailer := newMailServer(t, true, func(m *mailServer) {
				m.tls, m.implicit, m.user, m.password = serverTLS, mode == "tls", "fennec", "s3cret"
			})
			e := &env{smtp: mailer}
			e.Server = stocktest.Start(t, withSMTP(mailer.addr), fennectest.WithExtract(&e.bus),
				fennectest.WithModuleConfig(notifications.SectionName, func(c *notifications.Config) {
					c.SMTPTLS, c.SMTPCAFile, c.SMTPUser, c.SMTPPassword = mode, caFile, "fennec", "s3cret"
				}))
			author := e.CreateUser(t, "sealed")
			p := e.project(t, author.Client, "Sealed", "private")
			e.watchers(t, p, 1, "tw")
			if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Over TLS")}); err != nil {
				t.Fatal(err)
			}
			if got := e.take(t, "Sealed | Over TLS (#1)"); len(got) != 1 || got[0].To[0] != "tw0@example.com" {
				t.Fatalf("mails: %+v", got)
			}
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		mailer := newMailServer(t, true, func(m *mailServer) { m.tls = serverTLS })
		core, logs := observer.New(zap.WarnLevel)
		e := &env{smtp: mailer}
		e.Server = stocktest.Start(t, withSMTP(mailer.addr), fennectest.WithExtract(&e.bus), fennectest.WithLogger(zap.New(core)),
			fennectest.WithModuleConfig(notifications.SectionName, func(c *notifications.Config) { c.SMTPTLS = "starttls" }))
		author := e.CreateUser(t, "wary")
		p := e.project(t, author.Client, "Wary", "private")
		e.watchers(t, p, 1, "uw")
		if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Not sent")}); err != nil {
			t.Fatal(err)
		}
		ctxDrain(t, e)
		// The sender refuses the certificate (and says why); the mail stays
		// queued.
		refused := func() bool {
			for _, entry := range logs.FilterMessageSnippet("mail delivery failed").All() {
				for _, f := range entry.Context {
					if f.Key == "error" && strings.Contains(f.Interface.(error).Error(), "certificate") {
						return true
					}
				}
			}
			return false
		}
		fennectest.Poll(t, 10*time.Second, func() (bool, string) {
			return refused(), fmt.Sprintf("no refused certificate in the log: %v", logs.All())
		})
		if len(mailer.mails()) != 0 || e.queued(t) != 1 {
			t.Fatalf("mails %d, queued %d", len(mailer.mails()), e.queued(t))
		}
	})
}
