package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// RunnersToken is the project's runners_token (project.RunnersTokens);
// the CI module checks the caller first.
func (s *Service) RunnersToken(ctx context.Context, projectID int64) (string, error) {
	var token string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, projectID)
		if errors.Is(err, store.ErrNotFound) {
			return project.ErrNotFound
		}
		if err == nil {
			token = p.RunnersToken
		}
		return err
	})
	return token, err
}

// ResetRunnersToken gives the project a new runners_token, re-indexed in
// the same transaction, so the old one stops registering runners at once
// (project.RunnersTokens).
func (s *Service) ResetRunnersToken(ctx context.Context, projectID int64) (string, error) {
	token := newToken()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, projectID)
		if errors.Is(err, store.ErrNotFound) {
			return project.ErrNotFound
		}
		if err != nil {
			return err
		}
		p.RunnersToken = token
		return projects.Update(tx, p)
	})
	if err != nil {
		return "", err
	}
	return token, nil
}
