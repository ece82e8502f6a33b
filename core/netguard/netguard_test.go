package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	g := New(false)
	for addr, want := range map[string]string{
		"127.0.0.1":        ReasonLocalhost,
		"127.255.0.9":      ReasonLocalhost,
		"0.0.0.0":          ReasonLocalhost,
		"0.1.2.3":          ReasonLocalhost,
		"::1":              ReasonLocalhost,
		"::":               ReasonLocalhost,
		"::ffff:127.0.0.1": ReasonLocalhost,
		"::127.0.0.1":      ReasonLocalhost, // IPv4-compatible
		"10.1.2.3":         ReasonLocalNetwork,
		"172.16.0.1":       ReasonLocalNetwork,
		"172.31.255.255":   ReasonLocalNetwork,
		"192.168.1.1":      ReasonLocalNetwork,
		"::ffff:10.0.0.1":  ReasonLocalNetwork,
		"100.64.0.1":       ReasonLocalNetwork,
		"192.0.0.8":        ReasonLocalNetwork,
		"198.18.0.1":       ReasonLocalNetwork,
		"240.0.0.1":        ReasonLocalNetwork,
		"255.255.255.255":  ReasonLocalNetwork,
		"224.0.0.251":      ReasonLinkLocal,    // link-local multicast (mDNS)
		"239.1.1.1":        ReasonLocalNetwork, // multicast
		"ff02::1":          ReasonLinkLocal,    // link-local multicast
		"ff05::2":          ReasonLocalNetwork,
		"fc00::1":          ReasonLocalNetwork, // unique local
		"fd12:3456::1":     ReasonLocalNetwork,
		"fec0::1":          ReasonLocalNetwork,
		"169.254.169.254":  ReasonLinkLocal, // cloud metadata
		"169.254.0.1":      ReasonLinkLocal,
		"fe80::1":          ReasonLinkLocal,
		"fe80::1%eth0":     ReasonLinkLocal,
		"64:ff9b::7f00:1":  ReasonLocalhost,    // NAT64 of 127.0.0.1
		"64:ff9b:1::1":     ReasonLocalNetwork, // local-use NAT64
		"2002:a9fe:a9fe::": ReasonLinkLocal,    // 6to4 of 169.254.169.254
		"2002:c0a8:101::1": ReasonLocalNetwork, // 6to4 of 192.168.1.1
		"8.8.8.8":          "",
		"140.82.112.3":     "",
		"172.32.0.1":       "",
		"100.128.0.1":      "",
		"2001:4860::8888":  "",
		"2002:808:808::1":  "", // 6to4 of 8.8.8.8
		"64:ff9b::808:808": "",
		"::ffff:8.8.8.8":   "",
	} {
		err := g.Check(netip.MustParseAddr(addr))
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrBlocked) {
				t.Errorf("%s: %v is not ErrBlocked", addr, err)
			}
		}
		if got != want {
			t.Errorf("Check(%s) = %q, want %q", addr, got, want)
		}
		if err := New(true).Check(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("allowing local requests, Check(%s) = %v", addr, err)
		}
	}
	var nilGuard *Guard
	if nilGuard.Check(netip.MustParseAddr("127.0.0.1")) == nil {
		t.Error("a nil Guard allowed loopback")
	}
}

func TestCheckURL(t *testing.T) {
	g := New(false)
	for raw, want := range map[string]string{
		"http://127.0.0.1:8080/a.git":              ReasonLocalhost,
		"https://[::1]/a.git":                      ReasonLocalhost,
		"http://[::ffff:7f00:1]/a.git":             ReasonLocalhost,
		"git://0.0.0.0/a.git":                      ReasonLocalhost,
		"http://2130706433/a.git":                  ReasonLocalhost, // 127.0.0.1 as one number
		"http://0x7f.1/a.git":                      ReasonLocalhost,
		"http://0177.0.0.1/a.git":                  ReasonLocalhost,
		"http://127.1/a.git":                       ReasonLocalhost,
		"http://127.0.0.1./a.git":                  ReasonLocalhost,
		"http://user:pw@10.0.0.5/a.git":            ReasonLocalNetwork,
		"http://169.254.169.254/latest/meta-data/": ReasonLinkLocal,
		"http://[fe80::1%25eth0]/a.git":            ReasonLinkLocal,
		"https://gitlab.com/a/b.git":               "",
		"http://localhost/a.git":                   "", // a name: refused when connecting
		"http://8.8.8.8/a.git":                     "",
		"http://1.2.3.4.5/a.git":                   "",
		"http://0x1.0x2.0x3.0x100/a.git":           "", // not an address: a name
		"::not a url":                              "",
	} {
		got := ""
		if err := g.CheckURL(raw); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckURL(%s) = %q, want %q", raw, got, want)
		}
	}
}

// The dialer refuses a loopback destination whatever name leads there,
// and lets it through when local requests are allowed.
func TestDialerRefusesResolvedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		addr := net.JoinHostPort(host, port)
		_, err := New(false).Dialer().DialContext(ctx, "tcp", addr)
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), ReasonLocalhost) {
			t.Errorf("dial %s: %v, want refused", addr, err)
		}
		c, err := New(true).Dialer().DialContext(ctx, "tcp", addr)
		if err != nil {
			t.Errorf("dial %s allowing local requests: %v", addr, err)
		} else {
			c.Close()
		}
		client := &http.Client{Transport: New(false).Transport()}
		if _, err := client.Get("http://" + addr + "/"); !errors.Is(err, ErrBlocked) {
			t.Errorf("GET via %s: %v, want refused", addr, err)
		}
		client = &http.Client{Transport: New(true).Transport()}
		if resp, err := client.Get("http://" + addr + "/"); err != nil {
			t.Errorf("GET via %s allowing local requests: %v", addr, err)
		} else {
			resp.Body.Close()
		}
	}
	if err := New(false).Control("tcp4", "93.184.216.34:80", nil); err != nil {
		t.Fatalf("a public address refused: %v", err)
	}
	if err := New(false).Control("unix", "/run/x.sock", nil); !errors.Is(err, ErrBlocked) {
		t.Fatalf("a unix socket allowed: %v", err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	if _, err := New(false).Resolve(ctx, "localhost"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Resolve(localhost) = %v, want refused", err)
	}
	ip, err := New(true).Resolve(ctx, "localhost")
	if err != nil || !ip.IsLoopback() {
		t.Errorf("Resolve(localhost) allowing local requests = %v, %v", ip, err)
	}
	if ip, err := New(false).Resolve(ctx, "8.8.8.8"); err != nil || ip.String() != "8.8.8.8" {
		t.Errorf("Resolve(8.8.8.8) = %v, %v", ip, err)
	}
	if _, err := New(false).Resolve(ctx, "169.254.169.254"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Resolve(169.254.169.254) = %v", err)
	}
}
