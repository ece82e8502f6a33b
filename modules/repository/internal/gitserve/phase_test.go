package gitserve

import (
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

func TestPhases(t *testing.T) {
	dir := repotest.Reference(t, repotest.Shape{})
	c := newGitClient(t)
	st, _ := gitpack.Open(dir, gitpack.Options{})
	defer st.Close()
	tips := refTips(t, c, dir)
	for i := 0; i < 3; i++ {
		w := newWalker(st, 1<<16)
		t0 := time.Now()
		var wc []int32
		for _, h := range tips {
			idx, _ := w.t.add(h)
			wc = append(wc, idx)
		}
		res, err := w.walkCommitsAll(wc)
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(0, &ru0)
		var roots []int32
		for _, ci := range res {
			roots = append(roots, w.commits[ci].tree)
		}
		if err := w.walkTrees(roots, nil, false); err != nil {
			t.Fatal(err)
		}
		t2 := time.Now()
		syscall.Getrusage(0, &ru1)
		cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		t.Logf("commits %v (%d), trees %v cpu %v, objects %d", t1.Sub(t0), len(res), t2.Sub(t1), cpu, w.t.len())
	}
}
