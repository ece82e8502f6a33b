package notifications_test

import (
	"fmt"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkIssueFanOut: an issue opened on a project with 1,000 watchers.
// Reported: the opening request's latency on that project and on one
// without watchers (same run), the latency of another write sent right
// after it (while the recipients are worked out and the mails sent), and
// the time from the request's start to the last of the 1,000 mails handed
// to the SMTP server.
func BenchmarkIssueFanOut(b *testing.B) {
	const watchers = 1000
	e := &env{smtp: newMailServer(b, true)}
	e.Server = stocktest.Start(b, withSMTP(e.smtp.addr), fennectest.WithExtract(&e.bus), fennectest.WithLogger(zap.NewNop()))
	author := e.CreateUser(b, "bench")
	watched := e.project(b, author.Client, "Watched", "private")
	quiet := e.project(b, author.Client, "Quiet", "private")
	g, _, err := e.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Fans"), Path: gitlab.Ptr("fans")})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Client.Projects.ShareProjectWithGroup(watched.ID, &gitlab.ShareWithGroupOptions{GroupID: gitlab.Ptr(g.ID),
		GroupAccess: gitlab.Ptr(gitlab.ReporterPermissions)}); err != nil {
		b.Fatal(err)
	}
	for i := range watchers {
		u := e.CreateUser(b, fmt.Sprintf("fan%04d", i))
		lvl := gitlab.ReporterPermissions
		if _, _, err := e.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(u.ID), AccessLevel: &lvl}); err != nil {
			b.Fatal(err)
		}
		if st, _, body := e.call(b, u.Token, "PUT", "/api/v4/projects/"+store.IDString(watched.ID)+"/notification_settings", `{"level":"watch"}`); st != 200 {
			b.Fatal(st, body)
		}
	}
	open := func(p *gitlab.Project, title string) time.Duration {
		start := time.Now()
		if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(title)}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var quietTimes, watchedTimes, during, fanOut []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range 5 {
			quietTimes = append(quietTimes, ms(open(quiet, fmt.Sprintf("quiet %d-%d", i, j))))
		}
		e.settle(b)
		e.smtp.mu.Lock()
		e.smtp.got = nil
		e.smtp.mu.Unlock()
		start := time.Now()
		took := open(watched, fmt.Sprintf("loud %d", i))
		watchedTimes = append(watchedTimes, ms(took))
		// A write right behind it, while the mails are being queued (in
		// the bus's transaction) and sent.
		during = append(during, ms(open(quiet, fmt.Sprintf("during %d", i))))
		// The server stamps the last mail's arrival: how soon the wait
		// sees it does not count.
		fennectest.Poll(b, 2*time.Minute, func() (bool, string) {
			n := len(e.smtp.mails())
			return n >= watchers, fmt.Sprintf("%d of %d mails arrived", n, watchers)
		})
		fanOut = append(fanOut, ms(e.smtp.lastAt().Sub(start)))
		e.settle(b)
		if n := len(e.smtp.mails()); n != watchers {
			b.Fatalf("%d mails, want %d", n, watchers)
		}
		e.smtp.mu.Lock()
		e.smtp.got = nil
		e.smtp.mu.Unlock()
	}
	b.StopTimer()
	b.ReportMetric(fennectest.Median(quietTimes), "ms/request-0-watchers")
	b.ReportMetric(fennectest.Median(watchedTimes), "ms/request-1000-watchers")
	b.ReportMetric(fennectest.Median(during), "ms/next-request-during-fan-out")
	b.ReportMetric(fennectest.Median(fanOut), "ms/event-to-last-mail")
	b.ReportMetric(float64(watchers)/(fennectest.Median(fanOut)/1000), "mails/s")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
