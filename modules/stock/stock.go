// Package stock is the standard bundle of modules that the fennec binary
// runs. It is the one package that imports every module; an embedder who
// wants fewer modules lists their own instead.
package stock

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/activity"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/issues"
	"github.com/fennec-forge/fennec/modules/mergerequests"
	"github.com/fennec-forge/fennec/modules/notifications"
	"github.com/fennec-forge/fennec/modules/oauth"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/snippets"
	"github.com/fennec-forge/fennec/modules/webhooks"
)

// Modules returns the stock modules, lowest layer first.
func Modules() []fennec.Module {
	return []fennec.Module{
		identity.Module(),
		projects.Module(),
		oauth.Module(),
		repository.Module(),
		collab.Module(),
		ci.Module(),
		issues.Module(),
		snippets.Module(),
		mergerequests.Module(),
		activity.Module(),
		notifications.Module(),
		webhooks.Module(),
	}
}
