package internal

import (
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// OldBuckets are the buckets a version before the mail queue wrote
// queued mail to.
func OldBuckets() []string { return append(mails.Buckets(), oldDeliveries.Buckets()...) }

// WriteOldMail queues a mail to each of to as a version before the mail
// queue did: a mail row and one delivery row per address.
func WriteOldMail(tx *store.Tx, key, subject string, to ...string) error {
	m := &Mail{Key: key, Subject: subject, Text: subject + " (text)", HTML: "<p>" + subject + "</p>",
		MessageID: key + "@fennec.test", Pending: len(to), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := mails.Insert(tx, m); err != nil {
		return err
	}
	for _, addr := range to {
		// An earlier refusal left an attempt and a next try that is due.
		if err := oldDeliveries.Insert(tx, &Delivery{MailID: m.ID, To: addr, Attempts: 1,
			NextTry: time.Now().Add(-time.Minute), LastError: "451 try later"}); err != nil {
			return err
		}
	}
	return nil
}
