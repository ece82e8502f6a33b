package internal

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
)

// A user's private token, as GitLab 9.x had it: one per user, full api
// rights, returned by POST /session and shown to an administrator who reads
// GET /user with sudo. Unlike every other token it must be shown again, so
// besides its hash (the "hash" index that every request's lookup uses) its
// Token record keeps the secret sealed with the instance key (core/sealed):
// a copy of fennec.db without secret.key does not reveal it.
//
// It is made when first needed (the first session login, or the first sudo
// read of the user), replaced by a reset, and deleted when the user is
// blocked or deleted. Tokens of kind private without a sealed secret are the
// per-login tokens that earlier versions minted: they keep working until the
// user's private token is reset (or the user blocked), so an upgrade signs
// no one out, but no new ones are made.

// purposePrivateToken binds a sealed private token to its field.
const purposePrivateToken = "identity.private_token"

// privateTokenName names the user's one private token record.
const privateTokenName = "private_token"

// userPrivateToken returns the user's private token, making it when the user
// has none yet. A token that no longer opens (secret.key was replaced) is
// replaced by a new one: it can never be shown again, and a credential
// nobody can show is one nobody should still hold.
func (s *Service) userPrivateToken(tx *store.Tx, userID int64) (string, error) {
	ids, err := tokens.IDsBy(tx, "user", strconv.FormatInt(userID, 10))
	if err != nil {
		return "", err
	}
	for _, id := range ids {
		t, err := tokens.Get(tx, id)
		if err != nil {
			return "", err
		}
		if t.Kind != KindPrivate || t.Sealed == "" {
			continue
		}
		secret, err := s.box.Unseal(t.Sealed, purposePrivateToken)
		if err == nil && sealed.IsSealed(t.Sealed) && hashToken(secret) == t.Hash {
			return secret, nil
		}
		// Never log the value: only that it was replaced, and whose.
		s.log.Warn("identity: a private token does not open with this instance's key; replacing it",
			zap.Int64("user_id", userID), zap.Int64("token_id", t.ID))
		if err := tokens.Delete(tx, t.ID); err != nil {
			return "", err
		}
	}
	secret, err := newSecret()
	if err != nil {
		return "", err
	}
	t := &Token{
		UserID: userID, Kind: KindPrivate, Name: privateTokenName, Hash: hashToken(secret),
		Sealed: s.box.Seal(secret, purposePrivateToken), Scopes: []string{auth.ScopeAPI}, CreatedAt: s.now().UTC(),
	}
	return secret, tokens.Insert(tx, t)
}

// revokePrivateTokens deletes every private token of the user: the sealed
// one and any per-login token of earlier versions. The next login (or sudo
// read) makes a new one.
func revokePrivateTokens(tx *store.Tx, userID int64) error {
	ids, err := tokens.IDsBy(tx, "user", strconv.FormatInt(userID, 10))
	if err != nil {
		return err
	}
	for _, id := range ids {
		t, err := tokens.Get(tx, id)
		if err != nil {
			return err
		}
		if t.Kind == KindPrivate {
			if err := tokens.Delete(tx, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// SudoPrivateToken implements user.Service: the target's private token for
// GET /user with sudo, made if the target has none yet (the only read that
// may write a token, and once per user). Only credentials that already
// carry full api rights get it: a read_user+sudo token could otherwise
// trade itself for the target's full-rights token. GitLab 9.x, whose field this is, allowed sudo only with
// an administrator's private token, which always had full rights.
func (s *Service) SudoPrivateToken(ctx context.Context) (string, bool, error) {
	p := auth.FromContext(ctx)
	if p.Sudoer == nil || p.IsAnonymous() || !p.HasScope(auth.ScopeAPI) {
		return "", false, nil
	}
	var secret string
	err := s.update(ctx, func(tx *store.Tx) error {
		if !users.Exists(tx, p.User.ID) {
			return auth.ErrUserNotFound
		}
		var err error
		secret, err = s.userPrivateToken(tx, p.User.ID)
		return err
	})
	if err != nil {
		return "", false, err
	}
	return secret, true, nil
}

// ResetPrivateToken implements user.Service: it replaces the user's private
// token: the current one (and any per-login token of earlier versions)
// stops working at once, and the next session login returns a new one.
// ErrUserNotFound for an unknown user.
func (s *Service) ResetPrivateToken(ctx context.Context, userID int64) error {
	if err := mayManage(ctx, userID); err != nil {
		return err
	}
	return s.update(ctx, func(tx *store.Tx) error {
		if !users.Exists(tx, userID) {
			return auth.ErrUserNotFound
		}
		return revokePrivateTokens(tx, userID)
	})
}

// resetPrivateTokenCommand is the operator's reset (admin command).
func (s *Service) resetPrivateTokenCommand(ctx context.Context, args []string, out io.Writer) error {
	ctx, a, err := s.commandUser(ctx, args)
	if err != nil {
		return err
	}
	if err := s.ResetPrivateToken(ctx, a.ID); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: private token reset; the next login gets a new one\n", a.Username)
	return nil
}
