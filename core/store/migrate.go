package store

import (
	"bytes"
	"context"
	"fmt"
	"sort"
)

// Migration is one ordered schema change of one module. Versions of a module
// start at 1 and increase by one; each runs once, in its own transaction,
// together with the record that it ran.
type Migration struct {
	Module  string
	Version int
	Name    string
	Up      func(tx *Tx) error
}

// SchemaVersion reports the last migration version applied for a module.
func (db *DB) SchemaVersion(module string) (int, error) {
	var v int
	err := db.View(context.Background(), func(tx *Tx) error {
		v = schemaVersion(tx, module)
		return nil
	})
	return v, err
}

// schemaKeyPrefix starts the meta bucket's key of a module's schema
// version ("schema:" + module name).
const schemaKeyPrefix = "schema:"

func schemaVersion(tx *Tx, module string) int {
	raw := tx.bucket(metaBucket).Get([]byte(schemaKeyPrefix + module))
	if len(raw) != 8 {
		return 0
	}
	return int(KeyID(raw))
}

// Migrate applies the migrations that have not run yet, module by module in
// name order and within a module by version. It refuses gaps, duplicates and
// a database newer than the code (downgrades are not supported).
func (db *DB) Migrate(ctx context.Context, migrations []Migration) error {
	byModule := map[string][]Migration{}
	for _, m := range migrations {
		if m.Module == "" || m.Version < 1 || m.Up == nil {
			return fmt.Errorf("store: migration %q of %q is incomplete", m.Name, m.Module)
		}
		byModule[m.Module] = append(byModule[m.Module], m)
	}
	modules := make([]string, 0, len(byModule))
	for name, ms := range byModule {
		modules = append(modules, name)
		sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
		for i, m := range ms {
			if m.Version != i+1 {
				return fmt.Errorf("store: migrations of %q must be numbered 1..n without gaps; found %d at position %d", name, m.Version, i+1)
			}
		}
	}
	sort.Strings(modules)
	// Refuse a database newer than the code before changing anything.
	for _, name := range modules {
		current, err := db.SchemaVersion(name)
		if err != nil {
			return err
		}
		if current > len(byModule[name]) {
			return fmt.Errorf("store: the database has %s schema version %d but this build knows only %d; use a newer fennec", name, current, len(byModule[name]))
		}
	}
	for _, name := range modules {
		ms := byModule[name]
		current, err := db.SchemaVersion(name)
		if err != nil {
			return err
		}
		for _, m := range ms[current:] {
			// Alone: a migration may rewrite a whole table and must run
			// exactly once.
			err := db.UpdateAlone(ctx, func(tx *Tx) error {
				if err := m.Up(tx); err != nil {
					return err
				}
				return tx.bucket(metaBucket).Put([]byte(schemaKeyPrefix+name), Key(uint64(m.Version)))
			})
			if err != nil {
				return fmt.Errorf("store: migration %s %d (%s): %w", name, m.Version, m.Name, err)
			}
		}
	}
	return nil
}

// SchemaVersions are the schema versions of every module that has run a
// migration, as tx sees them (a backup's manifest records them).
func SchemaVersions(tx *Tx) map[string]int {
	out := map[string]int{}
	c := tx.bucket(metaBucket).Cursor()
	prefix := []byte(schemaKeyPrefix)
	for k, v := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(v) == 8 {
			out[string(k[len(prefix):])] = int(KeyID(v))
		}
	}
	return out
}
