package collab_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/modules/collab/internal"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

func benchLogger(b *testing.B) fennectest.Option {
	logger, err := flog.New(flog.Options{Level: "warn", Format: "json", Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	return fennectest.WithLogger(logger)
}

// BenchmarkListNotes measures GET /projects/:id/things/:thing_iid/notes
// (20 notes a page, the default) with 1,000,000 notes spread over 100,000
// noteables of one project (10 each, authored by 10 users). The notes are
// seeded straight into the store (internal.Seed, 10,000 a transaction)
// with fsync off: the API would take far too long, and seeding is not what
// is measured; reads do not fsync anyway. It reports the median and p99
// latency of sequential requests, over one keep-alive connection, each for
// a noteable picked at random, and the seeding rate.
func BenchmarkListNotes(b *testing.B) {
	const (
		noteables = 100_000
		perThing  = 10
		batch     = 10_000
		requests  = 2_000
	)
	e := startWith(b, nil, benchLogger(b), fennectest.WithConfig(func(c *config.Config) { c.NoSync = true }))
	owner := e.user(b, "owner")
	p := e.project(b, owner.Client, "big", "private")
	var authors []int64
	for i := range 10 {
		authors = append(authors, e.user(b, "author"+strconv.Itoa(i)).ID)
	}
	things := make([]target.Noteable, noteables)
	for i := range things {
		things[i] = e.things.add(p.ID, owner.ID, "Thing "+strconv.Itoa(i), false)
	}
	seeding := time.Now()
	at := time.Now().UTC()
	list := make([]internal.SeedNote, 0, batch)
	for i, th := range things {
		for k := range perThing {
			list = append(list, internal.SeedNote{Noteable: th, AuthorID: authors[k], At: at,
				Body: "Note " + strconv.Itoa(k) + " on thing " + strconv.Itoa(i) + ": a sentence or two of ordinary comment text."})
		}
		if len(list) == batch || i == len(things)-1 {
			if err := internal.Seed(context.Background(), e.db, list); err != nil {
				b.Fatal(err)
			}
			list = list[:0]
		}
	}
	seedTook := time.Since(seeding)
	if n := e.countNotes(b, things[noteables-1].ID); n != perThing {
		b.Fatalf("the last thing has %d notes", n)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true}}
	get := func(iid int64) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, e.URL+notesPath(p.ID, iid), nil)
		req.Header.Set("PRIVATE-TOKEN", owner.Token)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if resp.StatusCode != 200 || strings.Count(string(raw), `"noteable_type":"Thing"`) != perThing {
			b.Fatalf("%d %.200s", resp.StatusCode, raw)
		}
		return took
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 { // warm the connection and the caches a little
		get(int64(rng.IntN(noteables)) + 1)
	}
	var lat []float64
	b.ResetTimer()
	for range b.N {
		for range requests {
			lat = append(lat, float64(get(int64(rng.IntN(noteables))+1).Microseconds())/1000)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(lat), "list-median-ms")
	b.ReportMetric(lat[len(lat)*99/100], "list-p99-ms")
	b.ReportMetric(float64(noteables*perThing)/seedTook.Seconds(), "seed-notes/s")
}

// BenchmarkCreateNotes measures POST .../things/:thing_iid/notes from 32
// concurrent writers through the real HTTP API, with fsync on (the store's
// group commit), each note on one of 1,000 noteables, for 5 s. Every
// create also publishes its feed entry and NoteEvent, which the activity
// module's subscriber writes meanwhile, as in production.
func BenchmarkCreateNotes(b *testing.B) {
	const (
		writers   = 32
		noteables = 1000
		d         = 5 * time.Second
	)
	e := startWith(b, nil, benchLogger(b))
	owner := e.user(b, "owner")
	p := e.project(b, owner.Client, "busy", "private")
	var users []user
	for i := range writers {
		u := e.user(b, "writer"+strconv.Itoa(i))
		e.member(b, p, u, 30)
		users = append(users, u)
	}
	for i := range noteables {
		e.things.add(p.ID, owner.ID, "Thing "+strconv.Itoa(i), false)
	}
	var seq atomic.Int64
	var rps []float64
	var p99s []time.Duration
	b.ResetTimer()
	for range b.N {
		r, p99 := fennectest.LoadRequests(b, writers, d, http.StatusCreated, func(w, i int) *http.Request {
			n := seq.Add(1)
			body := `{"body":"Comment number ` + strconv.FormatInt(n, 10) + ` from a concurrent writer."}`
			req, _ := http.NewRequest(http.MethodPost, e.URL+notesPath(p.ID, n%noteables+1), strings.NewReader(body))
			req.Header.Set("PRIVATE-TOKEN", users[w].Token)
			req.Header.Set("Content-Type", "application/json")
			return req
		})
		rps, p99s = append(rps, r), append(p99s, p99)
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(fennectest.Median(rps), "notes-created/s")
	b.ReportMetric(float64(slices.Max(p99s).Microseconds())/1000, "create-p99-ms")
}
