package authprovider_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/fennec-forge/fennec/sdk/authprovider"
	authproviderpb "github.com/fennec-forge/fennec/sdk/authprovider/proto"
)

// fake is a Provider made of function fields; nil ones are not called.
type fake struct {
	configure    func(context.Context, []byte) error
	authenticate func(context.Context, string, string) (authprovider.Identity, error)
}

func (f *fake) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{Name: "fake", Version: "0", APIVersions: []string{"v1"}}, nil
}

func (f *fake) Configure(ctx context.Context, s []byte) error {
	if f.configure == nil {
		return nil
	}
	return f.configure(ctx, s)
}

func (f *fake) Authenticate(ctx context.Context, login, password string) (authprovider.Identity, error) {
	return f.authenticate(ctx, login, password)
}

// serve returns the raw gRPC client and the host-side Client for p.
func serve(t *testing.T, p authprovider.Provider) (authproviderpb.AuthProviderClient, *authprovider.Client) {
	t.Helper()
	conn, _ := plugin.TestGRPCConn(t, func(s *grpc.Server) {
		authprovider.Register(s, p, nil)
	})
	return authproviderpb.NewAuthProviderClient(conn), authprovider.NewClient(conn)
}

// Every rejection travels as response data, never as a gRPC error, and comes
// back as its sentinel with the plugin's message.
func TestRejectionsAreDataAndMapBack(t *testing.T) {
	for _, sentinel := range []error{authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser, authprovider.ErrDisabled} {
		t.Run(sentinel.Error(), func(t *testing.T) {
			raw, client := serve(t, &fake{authenticate: func(context.Context, string, string) (authprovider.Identity, error) {
				return authprovider.Identity{}, fmt.Errorf("directory says no: %w", sentinel)
			}})
			resp, err := raw.Authenticate(context.Background(), &authproviderpb.AuthenticateRequest{Login: "a", Password: []byte("b")})
			if err != nil {
				t.Fatalf("a rejection travelled as a gRPC error: %v", err)
			}
			if resp.GetRejection() == nil {
				t.Fatalf("no rejection in %v", resp)
			}
			_, err = client.Authenticate(context.Background(), "a", "b")
			if !errors.Is(err, sentinel) || errors.Is(err, authprovider.ErrUnavailable) {
				t.Fatalf("got %v, want errors.Is %v and not unavailable", err, sentinel)
			}
			if !strings.Contains(err.Error(), "directory says no") {
				t.Errorf("the plugin's message was lost: %v", err)
			}
		})
	}
}

// A failure (not a rejection), a panic, and an answer that breaks the
// contract all wrap ErrUnavailable; the server survives the panic.
func TestFailuresAreUnavailable(t *testing.T) {
	cases := map[string]func(context.Context, string, string) (authprovider.Identity, error){
		"error": func(context.Context, string, string) (authprovider.Identity, error) {
			return authprovider.Identity{}, errors.New("ldap: connection refused")
		},
		"panic": func(context.Context, string, string) (authprovider.Identity, error) {
			panic("boom")
		},
		"identity without external id": func(context.Context, string, string) (authprovider.Identity, error) {
			return authprovider.Identity{Username: "x"}, nil
		},
	}
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			_, client := serve(t, &fake{authenticate: fn})
			_, err := client.Authenticate(context.Background(), "a", "b")
			if !errors.Is(err, authprovider.ErrUnavailable) {
				t.Fatalf("got %v, want ErrUnavailable", err)
			}
			for _, s := range []error{authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser} {
				if errors.Is(err, s) {
					t.Fatalf("a failure looks like a rejection: %v", err)
				}
			}
			if _, err := client.Describe(context.Background()); err != nil {
				t.Fatalf("server did not survive: %v", err)
			}
		})
	}
}

func TestCallerCancellationIsUnavailableAndCanceled(t *testing.T) {
	started := make(chan struct{})
	_, client := serve(t, &fake{authenticate: func(ctx context.Context, _, _ string) (authprovider.Identity, error) {
		close(started)
		<-ctx.Done()
		return authprovider.Identity{}, ctx.Err()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := client.Authenticate(ctx, "a", "b")
	if !errors.Is(err, authprovider.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want ErrUnavailable and context.Canceled", err)
	}
}

func TestOptionalMethodsNotImplementedAreNotSupported(t *testing.T) {
	_, client := serve(t, &fake{})
	if _, err := client.SearchUsers(context.Background(), "a", 10); !errors.Is(err, authprovider.ErrNotSupported) {
		t.Errorf("SearchUsers: %v, want ErrNotSupported", err)
	}
	if _, err := client.SyncUsers(context.Background(), []string{"a"}); !errors.Is(err, authprovider.ErrNotSupported) {
		t.Errorf("SyncUsers: %v, want ErrNotSupported", err)
	}
}

func TestConfigureRefusalIsInvalidSettings(t *testing.T) {
	_, client := serve(t, &fake{configure: func(context.Context, []byte) error { return errors.New("url is required") }})
	err := client.Configure(context.Background(), []byte(`{}`))
	if !errors.Is(err, authprovider.ErrInvalidSettings) || !strings.Contains(err.Error(), "url is required") {
		t.Fatalf("got %v, want ErrInvalidSettings with the reason", err)
	}
}

// Passwords are bytes on the wire: any Go string arrives unchanged. A login
// that is not UTF-8 cannot be marshalled and names no one.
func TestPasswordsArriveByteForByte(t *testing.T) {
	got := make(chan string, 1)
	_, client := serve(t, &fake{authenticate: func(_ context.Context, _, pw string) (authprovider.Identity, error) {
		got <- pw
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}})
	pw := "\xff\x00é"
	if _, err := client.Authenticate(context.Background(), "alice", pw); !errors.Is(err, authprovider.ErrInvalidCredentials) {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if p != pw {
			t.Fatalf("password arrived as %q, sent %q", p, pw)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no call")
	}
	if _, err := client.Authenticate(context.Background(), "\xff", "x"); !errors.Is(err, authprovider.ErrInvalidCredentials) {
		t.Fatalf("non-UTF-8 login: %v", err)
	}
}
