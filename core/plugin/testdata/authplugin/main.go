// Command authplugin is a tiny auth provider for the host's tests: alice
// with password "secret"; login "crash" exits the process mid-call; "hang"
// blocks until the call is cancelled; "pid" reports the process id. Built by
// the tests, never shipped.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// apiVersion is overridden with -ldflags -X to build a plugin the host must
// refuse.
var apiVersion = authprovider.APIVersion

type provider struct {
	log   hclog.Logger
	mu    sync.Mutex
	realm string
}

func (p *provider) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{Name: "authplugin", Version: "1", APIVersions: []string{apiVersion}}, nil
}

func (p *provider) Configure(_ context.Context, raw []byte) error {
	var s struct {
		Realm string `json:"realm"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	if s.Realm == "" {
		return errors.New("realm is required")
	}
	p.mu.Lock()
	p.realm = s.Realm
	p.mu.Unlock()
	p.log.Info("configured", "realm", s.Realm)
	return nil
}

func (p *provider) Authenticate(ctx context.Context, login, password string) (authprovider.Identity, error) {
	p.mu.Lock()
	realm := p.realm
	p.mu.Unlock()
	switch login {
	case "crash":
		os.Exit(3)
	case "hang":
		p.log.Info("hanging") // tests wait for it: the call has reached the plugin
		<-ctx.Done()
		return authprovider.Identity{}, ctx.Err()
	case "pid":
		return authprovider.Identity{ExternalID: strconv.Itoa(os.Getpid()), Username: "pid"}, nil
	case "alice":
		if password == "secret" {
			return authprovider.Identity{ExternalID: "alice@" + realm, Username: "alice", Email: "alice@" + realm}, nil
		}
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}
	return authprovider.Identity{}, authprovider.ErrUnknownUser
}

func main() {
	log := authprovider.NewLogger("authplugin")
	authprovider.Serve(&provider{log: log})
}
