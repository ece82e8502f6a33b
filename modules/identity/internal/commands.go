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
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
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

// Commands are the identity module's admin commands. They act as the
// server itself (auth.System) through the same service calls as the API,
// so an unblock or a promotion from the command line is the API's, with
// its rules and its events.
func Commands(s *Service) []fennec.AdminCommand {
	return []fennec.AdminCommand{
		{Name: "user-reset-password", Run: s.resetPasswordCommand},
		{Name: "user-unblock", Run: s.unblockCommand},
		{Name: "user-make-admin", Run: s.makeAdminCommand},
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

// userByLogin finds a user by username or primary e-mail, as sign-in does.
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

// commandUser is the account the command's LOGIN names, with the
// server's own principal to act on it.
func (s *Service) commandUser(ctx context.Context, args []string) (context.Context, user.Account, error) {
	login, err := oneLogin(args)
	if err != nil {
		return ctx, user.Account{}, err
	}
	var id int64
	err = s.db.View(ctx, func(tx *store.Tx) error {
		u, err := userByLogin(tx, login)
		if err == nil {
			id = u.ID
		}
		return err
	})
	if err != nil {
		return ctx, user.Account{}, err
	}
	ctx = auth.WithPrincipal(ctx, auth.System())
	a, err := s.Account(ctx, id)
	return ctx, a, err
}

func (s *Service) unblockCommand(ctx context.Context, args []string, out io.Writer) error {
	ctx, a, err := s.commandUser(ctx, args)
	if err != nil {
		return err
	}
	if a.State == StateLDAPBlocked {
		return errors.New("blocked by the LDAP directory, which would block them again at the next sync: unblock them there")
	}
	changed, err := s.Unblock(ctx, a.ID)
	if err != nil {
		return err
	}
	what := "unblocked"
	if !changed {
		what = "was not blocked"
	}
	fmt.Fprintf(out, "%s %s\n", a.Username, what)
	return nil
}

func (s *Service) makeAdminCommand(ctx context.Context, args []string, out io.Writer) error {
	ctx, a, err := s.commandUser(ctx, args)
	if err != nil {
		return err
	}
	if a.Admin {
		fmt.Fprintf(out, "%s was already an administrator\n", a.Username)
		return nil
	}
	yes := true
	if _, err := s.UpdateAccount(ctx, a.ID, user.Fields{Admin: &yes}); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is now an administrator\n", a.Username)
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
	// Not UpdateAccount: a password an administrator sets there must be
	// changed at the next sign-in, and the operator's way back in must not.
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
	ctx = auth.WithPrincipal(ctx, auth.System())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSERNAME\tE-MAIL\tSTATE\tADMIN")
	const page = 500
	for offset := 0; ; offset += page {
		list, total, err := s.Accounts(ctx, user.ListOptions{}, offset, page)
		if err != nil {
			return err
		}
		for _, u := range list {
			if adminsOnly && !u.Admin {
				continue
			}
			admin := ""
			if u.Admin {
				admin = "yes"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", u.ID, u.Username, u.Email, u.State, admin)
		}
		if offset+page >= total {
			break
		}
	}
	return tw.Flush()
}
