package ask_test

import (
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

func TestCheckQuietHours(t *testing.T) {
	ok := []ask.QuietHours{
		{Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin"},
		{Start: "00:00", End: "23:59", TimeZone: "UTC"},
		{Start: " 12:30", End: "13:30 ", TimeZone: " America/New_York "},
	}
	for _, q := range ok {
		if got, err := ask.CheckQuietHours(q); err != nil || got.Start[0] == ' ' || got.TimeZone[0] == ' ' {
			t.Errorf("%+v: %+v %v", q, got, err)
		}
	}
	bad := []ask.QuietHours{
		{Start: "24:00", End: "07:00", TimeZone: "UTC"},
		{Start: "7:00", End: "08:00", TimeZone: "UTC"},
		{Start: "22:60", End: "07:00", TimeZone: "UTC"},
		{Start: "22:00", End: "", TimeZone: "UTC"},
		{Start: "22:00", End: "22:00", TimeZone: "UTC"},
		{Start: "22:00", End: "07:00", TimeZone: ""},
		{Start: "22:00", End: "07:00", TimeZone: "Local"},
		{Start: "22:00", End: "07:00", TimeZone: "Mars/Olympus_Mons"},
		{Start: "22:00", End: "07:00", TimeZone: "../../etc/passwd"},
		{Start: "-1:00", End: "07:00", TimeZone: "UTC"},
	}
	for _, q := range bad {
		if _, err := ask.CheckQuietHours(q); ask.ErrorCode(err) != ask.EQuietHoursInvalid {
			t.Errorf("%+v accepted: %v", q, err)
		}
	}
}

func TestQuietHoursByTheLocalClock(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ny, _ := time.LoadLocation("America/New_York")
	night := ask.QuietHours{Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin"}
	lunch := ask.QuietHours{Start: "12:30", End: "13:30", TimeZone: "America/New_York"}
	dstNight := ask.QuietHours{Start: "01:30", End: "03:30", TimeZone: "Europe/Berlin"}
	tests := []struct {
		name string
		q    ask.QuietHours
		at   time.Time
		want bool
	}{
		{"before the night", night, time.Date(2026, 12, 2, 21, 59, 0, 0, berlin), false},
		{"the night starts", night, time.Date(2026, 12, 2, 22, 0, 0, 0, berlin), true},
		{"after midnight", night, time.Date(2026, 12, 3, 3, 0, 0, 0, berlin), true},
		{"the last quiet minute", night, time.Date(2026, 12, 3, 6, 59, 59, 0, berlin), true},
		{"the night ends", night, time.Date(2026, 12, 3, 7, 0, 0, 0, berlin), false},
		{"midday", night, time.Date(2026, 12, 3, 12, 0, 0, 0, berlin), false},
		// The same instant read in another zone: 22:30 in Berlin is 21:30 UTC.
		{"by the zone's clock, not UTC's", night, time.Date(2026, 12, 2, 21, 30, 0, 0, time.UTC), true},
		{"UTC 06:30 is 07:30 in Berlin", night, time.Date(2026, 12, 3, 6, 30, 0, 0, time.UTC), false},
		// Summer time: Berlin is UTC+2, so 20:30 UTC is 22:30 there.
		{"summer offset", night, time.Date(2026, 7, 1, 20, 30, 0, 0, time.UTC), true},
		{"summer offset, before", night, time.Date(2026, 7, 1, 19, 30, 0, 0, time.UTC), false},
		{"a day span", lunch, time.Date(2026, 12, 2, 12, 45, 0, 0, ny), true},
		{"a day span, after", lunch, time.Date(2026, 12, 2, 13, 30, 0, 0, ny), false},
		{"a day span, in UTC", lunch, time.Date(2026, 12, 2, 17, 45, 0, 0, time.UTC), true},
		// 29 March 2026, Berlin: 02:00 CET becomes 03:00 CEST (00:59 UTC, then 01:00 UTC).
		{"spring forward: 01:45 local", dstNight, time.Date(2026, 3, 29, 0, 45, 0, 0, time.UTC), true},
		{"spring forward: 03:15 local, right after the jump", dstNight, time.Date(2026, 3, 29, 1, 15, 0, 0, time.UTC), true},
		{"spring forward: 03:30 local ends it", dstNight, time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC), false},
		// 25 October 2026, Berlin: 03:00 CEST becomes 02:00 CET (01:00 UTC): 02:00–02:59 twice.
		{"fall back: 02:30 local, the first time", dstNight, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC), true},
		{"fall back: 02:30 local, the second time", dstNight, time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), true},
		{"fall back: 03:30 local ends it", dstNight, time.Date(2026, 10, 25, 2, 30, 0, 0, time.UTC), false},
		{"unchecked hours are never quiet", ask.QuietHours{Start: "22:00", End: "07:00", TimeZone: "Nowhere/Else"}, time.Date(2026, 12, 2, 23, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.q.Quiet(tt.at); got != tt.want {
				t.Errorf("Quiet(%s) = %v, want %v", tt.at.In(berlin).Format(time.RFC3339), got, tt.want)
			}
		})
	}
}
