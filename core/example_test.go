package fennec_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/modules/identity"
)

// Example embeds Fennec in a host's own HTTP server: no listener of its own,
// only the identity module, mounted under the host's mux.
func Example() {
	cfg := config.Default()
	cfg.Listen = "" // the host serves app.Handler() itself
	cfg.Data = "/var/lib/myhost/fennec"
	cfg.ExternalURL = "https://example.com"

	logger, _ := zap.NewProduction()
	app, err := fennec.New(
		fennec.WithConfig(cfg),
		fennec.WithModules(identity.Module()),
		fennec.WithLogger(logger),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer app.Stop(context.Background())

	mux := http.NewServeMux()
	mux.Handle("/", app.Handler())
	log.Fatal(http.ListenAndServe(":8080", mux))
}

// Example_run lets Fennec listen by itself and stop on SIGINT or SIGTERM,
// which is what the fennec binary does.
func Example_run() {
	cfg := config.Default()
	cfg.Data = "./data"
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(identity.Module()))
	if err != nil {
		log.Fatal(err)
	}
	if err := app.Run(); err != nil {
		log.Fatal(err)
	}
}
