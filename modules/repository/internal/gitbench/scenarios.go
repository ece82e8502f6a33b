package main

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// scenario is one measured client operation. prepare and verify run
// outside the timing; run is timed.
type scenario struct {
	key, title string
	setup      func(b *bench) error
	prepare    func(b *bench, dir string, run int) error
	run        func(b *bench, url, dir string, run int) error
	verify     func(b *bench, s server, url, dir string, run int) error
}

func (b *bench) scenarios() []scenario {
	return []scenario{
		{
			key: "clone", title: "full clone",
			run: func(b *bench, url, dir string, _ int) error {
				_, err := b.cl.git("", "clone", "--bare", "-q", url, dir)
				return err
			},
			verify: func(b *bench, _ server, url, dir string, _ int) error {
				want, head, err := b.cl.remoteRefs(url)
				if err != nil {
					return err
				}
				got, err := b.cl.localRefs(dir, "refs/")
				if err != nil {
					return err
				}
				if d := want.diff(got); d != "" {
					return fmt.Errorf("the clone's refs differ from the server's: %s", d)
				}
				if out, err := b.cl.git(dir, "symbolic-ref", "HEAD"); err != nil || strings.TrimSpace(out) != head {
					return fmt.Errorf("the clone's HEAD is %q (%v), the server's %q", strings.TrimSpace(out), err, head)
				}
				return b.fsckClone(dir)
			},
		},
		{
			key: "shallow", title: "--depth 1 clone",
			run: func(b *bench, url, dir string, _ int) error {
				_, err := b.cl.git("", "clone", "--bare", "-q", "--depth", "1", url, dir)
				return err
			},
			verify: func(b *bench, _ server, url, dir string, _ int) error {
				all, head, err := b.cl.remoteRefs(url)
				if err != nil {
					return err
				}
				got, err := b.cl.localRefs(dir, "refs/heads/")
				if err != nil {
					return err
				}
				if d := (refs{head: all[head]}).diff(got); d != "" {
					return fmt.Errorf("the clone's branches differ from the server's HEAD branch: %s", d)
				}
				if n, err := b.cl.git(dir, "rev-list", "--count", "HEAD"); err != nil || strings.TrimSpace(n) != "1" {
					return fmt.Errorf("the shallow clone has %q commits (%v), want 1", strings.TrimSpace(n), err)
				}
				return b.fsckClone(dir)
			},
		},
		{
			key: "fetch", title: fmt.Sprintf("fetch of the last %d commits", b.fetchCommits),
			setup: setupFetch,
			prepare: func(b *bench, dir string, _ int) error {
				_, err := b.cl.git("", "clone", "--bare", "-q", b.fetchBase, dir)
				return err
			},
			run: func(b *bench, url, dir string, _ int) error {
				_, err := b.cl.git(dir, "fetch", "-q", url, "+refs/heads/*:refs/remotes/origin/*")
				return err
			},
			verify: func(b *bench, _ server, url, dir string, _ int) error {
				server, _, err := b.cl.remoteRefs(url)
				if err != nil {
					return err
				}
				want := refs{}
				for name, id := range server {
					if branch, ok := strings.CutPrefix(name, "refs/heads/"); ok {
						want["refs/remotes/origin/"+branch] = id
					}
				}
				got, err := b.cl.localRefs(dir, "refs/remotes/origin/")
				if err != nil {
					return err
				}
				if d := want.diff(got); d != "" {
					return fmt.Errorf("the fetched refs differ from the server's: %s", d)
				}
				return b.fsckClone(dir)
			},
		},
		{
			key: "push", title: fmt.Sprintf("push of %d new commits", b.pushCommits),
			setup: setupPush,
			run: func(b *bench, url, _ string, run int) error {
				_, err := b.cl.git(b.pushClient, "push", "-q", url, fmt.Sprintf("refs/heads/push-%d:refs/heads/bench-push-%d", run, run))
				return err
			},
			verify: func(b *bench, s server, url, _ string, run int) error {
				server, _, err := b.cl.remoteRefs(url)
				if err != nil {
					return err
				}
				want, err := b.cl.git(b.pushClient, "rev-parse", fmt.Sprintf("refs/heads/push-%d", run))
				if err != nil {
					return err
				}
				name := fmt.Sprintf("refs/heads/bench-push-%d", run)
				if got := server[name]; got != strings.TrimSpace(want) {
					return fmt.Errorf("after the push the server has %s at %q, want %s", name, got, strings.TrimSpace(want))
				}
				if b.fsck {
					if err := b.cl.fsck(s.repoDir()); err != nil {
						return fmt.Errorf("fsck of the server's repository after the push: %w", err)
					}
				}
				// Every run should find the same refs on the server: without
				// this, each later push excludes one more branch and runs
				// grow slower on the client.
				if _, err := b.cl.git(b.pushClient, "push", "-q", url, ":"+name); err != nil {
					return fmt.Errorf("deleting the pushed branch: %w", err)
				}
				return nil
			},
		},
	}
}

func (b *bench) fsckClone(dir string) error {
	if !b.fsck {
		return nil
	}
	if err := b.cl.fsck(dir); err != nil {
		return fmt.Errorf("fsck of the clone: %w", err)
	}
	return nil
}

// setupFetch makes the repository the fetch runs start from: the reference
// at commit N-fetchCommits, without any object of the later commits.
func setupFetch(b *bench) error {
	if b.commits <= b.fetchCommits {
		return fmt.Errorf("the reference has %d commits, too few to fetch the last %d", b.commits, b.fetchCommits)
	}
	base := filepath.Join(b.work, "fetch-base.git")
	if _, err := os.Stat(base); err == nil {
		b.fetchBase = base
		return nil
	}
	if _, err := b.cl.git("", "clone", "--bare", "-q", b.source, base); err != nil {
		return err
	}
	out, err := b.cl.git(base, "rev-parse", fmt.Sprintf("refs/heads/master~%d", b.fetchCommits))
	if err != nil {
		return err
	}
	steps := [][]string{
		{"update-ref", "refs/heads/master", strings.TrimSpace(out)},
		{"remote", "remove", "origin"},
		{"repack", "-a", "-d", "-q"},
		{"prune", "--expire=now"},
	}
	for _, args := range steps {
		if _, err := b.cl.git(base, args...); err != nil {
			return err
		}
	}
	if _, err := b.cl.git(base, "cat-file", "-e", b.tip); err == nil {
		return fmt.Errorf("%s still has the tip %s", base, b.tip)
	}
	b.fetchBase = base
	return nil
}

// setupPush makes the repository the pushes come from: the reference plus
// branches push-0 ... push-<runs>, each pushCommits new commits on top of
// the tip (distinct ones, so every run sends the same amount of data).
func setupPush(b *bench) error {
	client := filepath.Join(b.work, "push-client.git")
	if _, err := b.cl.git("", "clone", "--bare", "-q", b.source, client); err != nil {
		return err
	}
	out, err := b.cl.git(client, "ls-tree", "-r", "--name-only", "refs/heads/master")
	if err != nil {
		return err
	}
	var paths []string
	for _, p := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasSuffix(p, ".txt") {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return fmt.Errorf("no text files in the reference")
	}
	streamPath := filepath.Join(b.work, "push.stream")
	f, err := os.Create(streamPath)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewSource(1000))
	start := time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC)
	authors := []string{"Kofi", "Lena", "Mira", "Nils"}
	for r := 0; r <= b.runs; r++ {
		for c := 0; c < b.pushCommits; c++ {
			who := authors[c%len(authors)]
			when := start.Add(time.Duration(r*b.pushCommits+c) * 7 * time.Minute).Unix()
			msg := fmt.Sprintf("Pushed change %d of set %d by %s\n", c, r, who)
			fmt.Fprintf(w, "commit refs/heads/push-%d\n", r)
			fmt.Fprintf(w, "author %s <%s@example.com> %d +0000\n", who, strings.ToLower(who), when)
			fmt.Fprintf(w, "committer %s <%s@example.com> %d +0000\n", who, strings.ToLower(who), when)
			fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
			if c == 0 {
				fmt.Fprintf(w, "from %s\n", b.tip)
			}
			for k := 0; k < 1+rng.Intn(3); k++ {
				var content strings.Builder
				for l := 0; l < 4+rng.Intn(8); l++ {
					fmt.Fprintf(&content, "set %d change %d line %d %08x\n", r, c, l, rng.Uint32())
				}
				fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", paths[rng.Intn(len(paths))], content.Len(), content.String())
			}
			w.WriteString("\n")
		}
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return err
	}
	stream, err := os.Open(streamPath)
	if err != nil {
		return err
	}
	defer os.Remove(streamPath)
	defer stream.Close()
	if _, err := b.cl.run(client, stream, "fast-import", "--quiet"); err != nil {
		return err
	}
	out, err = b.cl.git(client, "rev-list", "--count", "refs/heads/push-0", "^refs/heads/master")
	if err != nil {
		return err
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(out)); n != b.pushCommits {
		return fmt.Errorf("push-0 has %s new commits, want %d", strings.TrimSpace(out), b.pushCommits)
	}
	b.pushClient = client
	return nil
}
