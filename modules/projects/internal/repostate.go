package internal

// What the repository module reports back about a project's repository:
// the default branch chosen by the first push, and how an import went.
// Neither is a caller's action, so there is no permission check here: the
// repository module has checked the push or runs the import itself.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// SetDefaultBranch records the project's default branch.
func (s *Service) SetDefaultBranch(ctx context.Context, projectID int64, branch string) error {
	return s.updateRecord(ctx, projectID, func(p *Project) bool {
		if p.DefaultBranch == branch {
			return false
		}
		p.DefaultBranch = branch
		return true
	})
}

// SetImportStatus records the state of the project's import and, for a
// failure, the message the project shows as import_error.
func (s *Service) SetImportStatus(ctx context.Context, projectID int64, status, message string) error {
	return s.updateRecord(ctx, projectID, func(p *Project) bool {
		if p.ImportStatus == status && p.ImportError == message {
			return false
		}
		p.ImportStatus, p.ImportError = status, message
		return true
	})
}

// updateRecord changes a stored project in one transaction; change says
// whether anything changed. A project deleted meanwhile is not an error.
func (s *Service) updateRecord(ctx context.Context, projectID int64, change func(*Project) bool) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, projectID)
		if err != nil {
			return err
		}
		if !change(p) {
			return nil
		}
		p.UpdatedAt = s.now().UTC()
		return projects.Update(tx, p)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// ProjectIDs are the ids of every project.
func (s *Service) ProjectIDs(ctx context.Context) ([]int64, error) {
	var out []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := projects.IDs(tx)
		out = make([]int64, len(ids))
		for i, id := range ids {
			out[i] = id
		}
		return err
	})
	return out, err
}

// runnersTokenKey is a runners_token's key in the projects' index.
func runnersTokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ProjectIDByRunnersToken is the project whose runners_token this is, for
// the CI module's runner registration; ErrProjectNotFound when none is.
// The token is the credential: there is no caller to check.
func (s *Service) ProjectIDByRunnersToken(ctx context.Context, token string) (int64, error) {
	if token == "" {
		return 0, project.ErrNotFound
	}
	var id int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := projects.IDsBy(tx, "runners_token", runnersTokenKey(token))
		if err != nil {
			return err
		}
		for _, pid := range ids {
			p, err := projects.Get(tx, pid)
			if err != nil {
				return err
			}
			if subtle.ConstantTimeCompare([]byte(p.RunnersToken), []byte(token)) == 1 {
				id = p.ID
				return nil
			}
		}
		return project.ErrNotFound
	})
	return id, err
}
