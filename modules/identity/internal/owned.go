package internal

import (
	"context"
	"errors"
	"strconv"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// Keys and e-mails are rows that belong to a user (through their "user"
// index); these helpers list and delete them the same way.

// ownedRow is a row with an owner.
type ownedRow interface{ OwnerID() int64 }

func (k *Key) OwnerID() int64   { return k.UserID }
func (e *Email) OwnerID() int64 { return e.UserID }

// listByUser pages through the rows of a table that belong to a user (its
// "user" index), oldest first, converting each with record. The user must
// exist (ErrUserNotFound), read in the same transaction.
func listByUser[T any, P store.Record[T, int64], V any](ctx context.Context, db *store.DB, table *store.Table[int64, T, P], userID int64, offset, limit int, record func(P) V) ([]V, int, error) {
	list := []V{}
	total := 0
	err := db.View(ctx, func(tx *store.Tx) error {
		if userID <= 0 || !users.Exists(tx, userID) {
			return user.ErrUserNotFound
		}
		ids, err := table.IDsBy(tx, "user", strconv.FormatInt(userID, 10))
		if err != nil {
			return err
		}
		total = len(ids)
		for _, id := range store.Window(ids, offset, limit) {
			row, err := table.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, record(row))
		}
		return nil
	})
	return list, total, err
}

// deleteOwnedRow deletes the row id if it belongs to userID; otherwise (or
// when it does not exist) it returns notFound and changes nothing. The user
// must exist (ErrUserNotFound).
func deleteOwnedRow[T any, P interface {
	store.Record[T, int64]
	ownedRow
}](ctx context.Context, s *Service, table *store.Table[int64, T, P], userID, id int64, notFound error) (P, error) {
	var row P
	err := s.update(ctx, func(tx *store.Tx) error {
		if userID <= 0 || !users.Exists(tx, userID) {
			return user.ErrUserNotFound
		}
		var err error
		row, err = table.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && row.OwnerID() != userID) {
			return notFound
		}
		if err != nil {
			return err
		}
		return table.Delete(tx, id)
	})
	if err != nil {
		return nil, err
	}
	return row, nil
}
