// Package ldaptest runs a private OpenLDAP slapd for tests: a generated
// config and database in a temporary directory, a free loopback port, a few
// users, and cleanup when the test ends. It needs Debian's slapd (and
// ldap-utils for nothing: it talks LDAP itself); without slapd the test is
// skipped, except under CI=true, where it fails.
package ldaptest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// The directory's fixed names and passwords.
const (
	SlapdPath = "/usr/sbin/slapd"
	Suffix    = "dc=example,dc=com"
	RootDN    = "cn=admin,dc=example,dc=com"
	RootPW    = "svc-P4ss-7c1e"
	AlicePW   = "alice-S3cret!"
	BobPW     = "bob-S3cret?"
	TwinPW    = "twin-pass"
)

// ssha is an OpenLDAP {SSHA} hash of pw.
func ssha(pw string) string {
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	h := sha1.New()
	h.Write([]byte(pw))
	h.Write(salt)
	return "{SSHA}" + base64.StdEncoding.EncodeToString(append(h.Sum(nil), salt...))
}

// directoryData: alice (hashed password), bob (plain text), an admin, and
// two entries sharing the uid "twin" (an ambiguous login).
func directoryData() string {
	return fmt.Sprintf(`dn: dc=example,dc=com
objectClass: top
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,dc=example,dc=com
objectClass: organizationalUnit
ou: people

dn: ou=contractors,dc=example,dc=com
objectClass: organizationalUnit
ou: contractors

dn: uid=alice,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: alice
cn: Alice Liddell
sn: Liddell
mail: alice@example.com
userPassword: %s

dn: uid=bob,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: bob
cn: Bob Builder
sn: Builder
mail: bob@example.com
userPassword: %s

dn: uid=admin,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: admin
cn: Administrator
sn: Admin
mail: admin@example.com
userPassword: admin-pass-0

dn: uid=twin,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: twin
cn: Twin One
sn: One
userPassword: %s

dn: uid=twin,ou=contractors,dc=example,dc=com
objectClass: inetOrgPerson
uid: twin
cn: Twin Two
sn: Two
userPassword: %s
`, ssha(AlicePW), BobPW, TwinPW, TwinPW)
}

// Start runs a private slapd on a free loopback port, from a config
// and database in a temporary directory, and kills it at cleanup. It returns the ldap:// URL. Without
// slapd it skips, except in CI, where it fails.
func Start(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(SlapdPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("slapd is required in CI (apt-get install slapd): %v", err)
		}
		t.Skipf("slapd not installed (%v); apt-get install slapd ldap-utils", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	var modules strings.Builder
	if _, err := os.Stat("/usr/lib/ldap/back_mdb.so"); err == nil {
		modules.WriteString("modulepath /usr/lib/ldap\nmoduleload back_mdb\n")
	}
	conf := fmt.Sprintf(`include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile %[1]s/slapd.pid
argsfile %[1]s/slapd.args
%[2]s
database mdb
maxsize 33554432
suffix "%[3]s"
rootdn "%[4]s"
rootpw %[5]s
directory %[1]s/db
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
`, dir, modules.String(), Suffix, RootDN, RootPW)
	confPath := filepath.Join(dir, "slapd.conf")
	ldifPath := filepath.Join(dir, "data.ldif")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ldifPath, []byte(directoryData()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(SlapdPath, "-T", "add", "-f", confPath, "-l", ldifPath).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v\n%s", err, out)
	}

	for try := 0; ; try++ {
		port := FreePort(t)
		url := fmt.Sprintf("ldap://127.0.0.1:%d", port)
		var stderr bytes.Buffer
		// -d keeps slapd in the foreground, so the test owns the process.
		cmd := exec.Command(SlapdPath, "-d", "0", "-f", confPath, "-h", url+"/")
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("slapd: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		if waitListening(fmt.Sprintf("127.0.0.1:%d", port), exited) {
			return url
		}
		if try == 2 {
			t.Fatalf("slapd did not start:\n%s", stderr.String())
		}
	}
}

// FreePort is a loopback port nobody listens on (for "directory down").
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// Delete removes an entry (a user leaving the directory).
func Delete(t testing.TB, url, dn string) {
	t.Helper()
	conn, err := ldap.DialURL(url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Bind(RootDN, RootPW); err != nil {
		t.Fatal(err)
	}
	if err := conn.Del(ldap.NewDelRequest(dn, nil)); err != nil {
		t.Fatalf("delete %s: %v", dn, err)
	}
}
