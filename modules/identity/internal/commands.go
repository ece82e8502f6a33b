package internal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"golang.org/x/crypto/bcrypt"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/store"
)

// CommandSpecs declare Commands to the command line: the operator's way
// back in when no administrator can sign in (a lost generated password, an
// administrator blocked by mistake), as GitLab's rake tasks are.
var CommandSpecs = []fennec.AdminCommandSpec{
	{Name: "user-reset-password", Args: "LOGIN", Secret: "new password",
		Summary: "set the password of a user (LOGIN: username or e-mail); typed without echo, or the first line of standard input; --generate prints a random one"},
	{Name: "user-unblock", Args: "LOGIN", Summary: "unblock a user blocked by an administrator"},
	{Name: "user-make-admin", Args: "LOGIN", Summary: "make a user an administrator"},
	{Name: "user-reset-private-token", Args: "LOGIN",
		Summary: "reset a user's private token: the current one stops working, the next login gets a new one"},
	{Name: "user-list", Args: "[--admins]", Flags: []fennec.AdminFlag{{Name: "admins", Usage: "list administrators only"}},
		Summary: "list users: id, username, e-mail, state, administrator"},
}

// Commands are the identity module's admin commands.
func Commands(s *Service) []fennec.AdminCommand {
	return []fennec.AdminCommand{
		{Name: "user-reset-password", Run: s.resetPasswordCommand},
		{Name: "user-unblock", Run: func(ctx context.Context, args []string, out io.Writer) error {
			return s.changeUserCommand(ctx, args, out, func(u *User) (string, error) {
				switch u.State {
				case StateActive:
					return "was not blocked", nil
				case StateLDAPBlocked:
					return "", errors.New("blocked by the LDAP directory, which would block them again at the next sync: unblock them there")
				}
				u.State = StateActive
				return "unblocked", nil
			})
		}},
		{Name: "user-make-admin", Run: func(ctx context.Context, args []string, out io.Writer) error {
			return s.changeUserCommand(ctx, args, out, func(u *User) (string, error) {
				if u.Admin {
					return "was already an administrator", nil
				}
				u.Admin = true
				return "is now an administrator", nil
			})
		}},
		{Name: "user-reset-private-token", Run: s.resetPrivateTokenCommand},
		{Name: "user-list", Run: s.listUsersCommand},
	}
}

// oneLogin is the LOGIN argument of a command.
func oneLogin(args []string) (string, error) {
	if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
		return "", errors.New("name one user: a username or an e-mail address")
	}
	return args[0], nil
}

// userByLogin finds a user by username or e-mail, as sign-in does.
func userByLogin(tx *store.Tx, login string) (*User, error) {
	index := "username"
	if strings.Contains(login, "@") {
		index = "email"
	}
	u, err := users.GetBy(tx, index, store.Fold(login))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no user %q", login)
	}
	return u, err
}

// changeUserCommand applies change to the user args names and reports what
// it did.
func (s *Service) changeUserCommand(ctx context.Context, args []string, out io.Writer, change func(*User) (string, error)) error {
	login, err := oneLogin(args)
	if err != nil {
		return err
	}
	var username, what string
	err = s.update(ctx, func(tx *store.Tx) error {
		u, err := userByLogin(tx, login)
		if err != nil {
			return err
		}
		if what, err = change(u); err != nil {
			return err
		}
		username = u.Username
		return users.Update(tx, u)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %s\n", username, what)
	return nil
}

func (s *Service) resetPasswordCommand(ctx context.Context, args []string, out io.Writer) error {
	login, err := oneLogin(args)
	if err != nil {
		return err
	}
	password, given := fennec.CommandSecret(ctx)
	if !given {
		if password, err = newSecret(); err != nil {
			return err
		}
	}
	if text := passwordProblem(password); text != "" {
		return errors.New("the password " + text)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return err
	}
	var username string
	err = s.update(ctx, func(tx *store.Tx) error {
		u, err := userByLogin(tx, login)
		if err != nil {
			return err
		}
		// The operator chose (or was shown) this password: it works as it
		// is, with no forced change at the next sign-in.
		u.PasswordHash, u.PasswordExpired = hash, false
		username = u.Username
		return users.Update(tx, u)
	})
	if err != nil {
		return err
	}
	if given {
		fmt.Fprintf(out, "password of %s reset\n", username)
	} else {
		fmt.Fprintf(out, "password of %s reset to: %s\n", username, password)
	}
	return nil
}

func (s *Service) listUsersCommand(ctx context.Context, args []string, out io.Writer) error {
	adminsOnly := false
	for _, a := range args {
		if a != "--admins" {
			return fmt.Errorf("unexpected argument %q", a)
		}
		adminsOnly = true
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSERNAME\tE-MAIL\tSTATE\tADMIN")
	err := s.db.View(ctx, func(tx *store.Tx) error {
		return users.Scan(tx, false, 0, func(u *User) (bool, error) {
			if !adminsOnly || u.Admin {
				admin := ""
				if u.Admin {
					admin = "yes"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", u.ID, u.Username, u.Email, u.State, admin)
			}
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	return tw.Flush()
}
