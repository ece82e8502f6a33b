package internal

// The repository module's admin commands: fennec repo gc PROJECT and
// fennec repo fsck PROJECT, where PROJECT is an id or a full path.

import (
	"context"
	"errors"
	"fmt"
	"io"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/projects"
)

// CommandSpecs declare Commands to the command line.
var CommandSpecs = []fennec.AdminCommandSpec{
	{Name: "repo-gc", Args: "PROJECT", Summary: "repack a project's repository (PROJECT: id or group/project) into one pack with a reachability index"},
	{Name: "repo-fsck", Args: "PROJECT", Summary: "check that every object a project's refs reach is present and intact"},
}

// CommandsDeps are what Commands is built from.
type CommandsDeps struct {
	fennec.In
	Housekeeper *Housekeeper
	Access      projects.Access
}

// Commands are the repository module's admin commands.
func Commands(d CommandsDeps) []fennec.AdminCommand {
	hk, access := d.Housekeeper, d.Access
	project := func(ctx context.Context, args []string) (projects.ProjectInfo, error) {
		if len(args) != 1 || args[0] == "" {
			return projects.ProjectInfo{}, errors.New("name one project: its id or its full path (group/project)")
		}
		info, err := access.Resolve(ctx, args[0])
		if err != nil {
			return projects.ProjectInfo{}, fmt.Errorf("project %q: %w", args[0], err)
		}
		return info, nil
	}
	return []fennec.AdminCommand{
		{Name: "repo-gc",
			Run: func(ctx context.Context, args []string, out io.Writer) error {
				info, err := project(ctx, args)
				if err != nil {
					return err
				}
				// A backup running holds repacks until it ends.
				fmt.Fprintf(out, "%s: repacking...\n", info.PathWithNamespace)
				res, err := hk.Repack(ctx, info.ID)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s: %d objects in one pack (was %d packs) in %s\n",
					info.PathWithNamespace, res.Objects, res.PacksBefore, res.Duration.Round(1e6))
				return nil
			}},
		{Name: "repo-fsck",
			Run: func(ctx context.Context, args []string, out io.Writer) error {
				info, err := project(ctx, args)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s:\n", info.PathWithNamespace)
				return hk.Fsck(ctx, info.ID, out)
			}},
	}
}
