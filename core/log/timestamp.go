package log

import (
	"time"

	"go.uber.org/zap/zapcore"
)

// AppendTimestamp appends t in UTC as "2006-01-02T15:04:05.000Z", the
// format of GitLab's API timestamps and of our log lines. It is written out
// by hand because time.AppendFormat, general as it is, was a visible share
// of each request (five timestamps per user view plus one per log line).
func AppendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	b = append(b,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+min/10), byte('0'+min%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
	return b
}

// timeEncoder writes log timestamps with AppendTimestamp.
func timeEncoder(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	var buf [32]byte
	enc.AppendByteString(AppendTimestamp(buf[:0], t))
}
