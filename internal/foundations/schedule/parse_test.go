package schedule

import (
	"errors"
	"testing"
	"time"
)

func TestParseString(t *testing.T) {
	tests := []struct {
		ranges []string
		zone   string
		want   string
	}{
		{[]string{"Mon-Fri 09:00-18:00", "Sun 22:00-02:00"}, "America/New_York", "Mon-Fri 09:00-18:00, Sun 22:00-02:00 (America/New_York)"},
		{[]string{"mon-FRI 9:00-18:00"}, "UTC", "Mon-Fri 09:00-18:00 (UTC)"},
		{[]string{"Monday-Friday 09:00-18:00"}, "UTC", "Mon-Fri 09:00-18:00 (UTC)"},
		{[]string{"  Mon - Fri   09:00 - 18:00 "}, "UTC", "Mon-Fri 09:00-18:00 (UTC)"},
		{[]string{"Mon, Wed, Fri 09:00-18:00"}, "UTC", "Mon,Wed,Fri 09:00-18:00 (UTC)"},
		{[]string{"Fri-Mon 10:00-11:00"}, "UTC", "Fri-Mon 10:00-11:00 (UTC)"},
		{[]string{"Sat,Sun,Mon 10:00-11:00"}, "UTC", "Sat-Mon 10:00-11:00 (UTC)"},
		{[]string{"Mon,Tue,Wed,Thu,Fri 10:00-11:00"}, "UTC", "Mon-Fri 10:00-11:00 (UTC)"},
		{[]string{"Mon,Wed,Fri-Sun 10:00-11:00"}, "UTC", "Wed,Fri-Mon 10:00-11:00 (UTC)"},
		{[]string{"Mon-Sun 10:00-11:00"}, "UTC", "10:00-11:00 (UTC)"},
		{[]string{"Wed-Tue 10:00-11:00"}, "UTC", "10:00-11:00 (UTC)"},
		{[]string{"Sun 10:00-11:00"}, "UTC", "Sun 10:00-11:00 (UTC)"},
		{[]string{"Tue-Tue 10:00-11:00"}, "UTC", "Tue 10:00-11:00 (UTC)"},
		{[]string{"22:00-00:00"}, "UTC", "22:00-24:00 (UTC)"},
		{[]string{"00:00-24:00"}, "UTC", "00:00-24:00 (UTC)"},
		{[]string{"Sat 23:59-00:01"}, "UTC", "Sat 23:59-00:01 (UTC)"},
		{nil, "Europe/Berlin", "always"},
		{[]string{}, "", "always"},
		{[]string{"09:00-17:00"}, "", "09:00-17:00 (Local)"},
		{[]string{"09:00-17:00"}, "Local", "09:00-17:00 (Local)"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.ranges, tt.zone)
		if err != nil {
			t.Errorf("Parse(%q, %q): %v", tt.ranges, tt.zone, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("Parse(%q, %q).String() = %q, want %q", tt.ranges, tt.zone, got, tt.want)
		}
	}
}

func TestParseZone(t *testing.T) {
	for _, zone := range []string{"", "Local"} {
		s, err := Parse([]string{"09:00-17:00"}, zone)
		if err != nil {
			t.Fatal(err)
		}
		if s.loc != time.Local {
			t.Errorf("zone %q: location %v, want time.Local", zone, s.loc)
		}
	}
	s, err := Parse(nil, "UTC")
	if err != nil {
		t.Fatal(err)
	}
	if s.loc != time.UTC {
		t.Errorf("zone UTC: location %v, want time.UTC", s.loc)
	}

	_, err = Parse([]string{"Mon 09:00-17:00"}, "America/New_Yrok")
	var ze *ZoneError
	if !errors.As(err, &ze) || ze.Zone != "America/New_Yrok" || ze.Err == nil {
		t.Fatalf("unknown zone: got %#v, want a *ZoneError naming it", err)
	}
	if got, want := err.Error(), `schedule.timezone "America/New_Yrok": not a known time zone (want an IANA name such as America/New_York, or UTC or Local)`; got != want {
		t.Errorf("unknown zone:\n got %s\nwant %s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		entry string
		want  string // the message after the entry
	}{
		{"Mon-Fry 09:00-18:00", `"Fry" is not a day (did you mean Fri?)`},
		{"Tues 09:00-18:00", `"Tues" is not a day (did you mean Tue?)`},
		{"Thurs 09:00-18:00", `"Thurs" is not a day (did you mean Thu?)`},
		{"Wendesday 09:00-18:00", `"Wendesday" is not a day (did you mean Wed?)`},
		{"Mun 09:00-18:00", `"Mun" is not a day (want Mon, Tue, Wed, Thu, Fri, Sat, Sun or a full name)`},
		{"weekdays 09:00-18:00", `"weekdays" is not a day (want Mon, Tue, Wed, Thu, Fri, Sat, Sun or a full name)`},
		{"Mon Wed 09:00-18:00", `"Mon Wed": separate days with commas, as in Mon,Wed`},
		{"Mon,,Wed 09:00-18:00", `"Mon,,Wed": a day is missing around a comma or dash`},
		{"Mon- 09:00-18:00", `"Mon-": a day is missing around a comma or dash`},
		{"-Fri 09:00-18:00", `"-Fri": a day is missing around a comma or dash`},
		{"Mon-Fri", `missing the time range (want DAYS HH:MM-HH:MM, such as Mon-Fri 09:00-18:00, or HH:MM-HH:MM for every day)`},
		{"", `empty range (want DAYS HH:MM-HH:MM, such as Mon-Fri 09:00-18:00, or HH:MM-HH:MM for every day)`},
		{"   ", `empty range (want DAYS HH:MM-HH:MM, such as Mon-Fri 09:00-18:00, or HH:MM-HH:MM for every day)`},
		{"Mon 09:00", `"09:00" is not a time range (want HH:MM-HH:MM)`},
		{"Mon 9am-5pm", `"9am" is not a time (want HH:MM)`},
		{"Mon 09:00-18", `"18" is not a time (want HH:MM)`},
		{"Mon 09:0-18:00", `"09:0" is not a time (want HH:MM)`},
		{"Mon 009:00-18:00", `"009:00" is not a time (want HH:MM)`},
		{"Mon 09:00-18:00-19:00", `"18:00-19:00" is not a time (want HH:MM)`},
		{"Mon 09:60-18:00", `"09:60" is not a time (minutes run 00-59)`},
		{"Mon 25:00-26:00", `"25:00" is not a time (hours run 00-23; 24:00 may end a range)`},
		{"Mon 09:00-24:01", `"24:01" is not a time (hours run 00-23; 24:00 may end a range)`},
		{"Mon 24:00-02:00", `"24:00" can only end a range`},
		{"Mon 09:00-09:00", `"09:00-09:00" starts and ends at the same time (for the whole day write 00:00-24:00)`},
		{"00:00-00:00", `"00:00-00:00" starts and ends at the same time (for the whole day write 00:00-24:00)`},
		{"Mon 09:00-18:00 EST", `unexpected "EST" after the time range "09:00-18:00"`},
	}
	for _, tt := range tests {
		_, err := Parse([]string{"Sat 10:00-14:00", tt.entry}, "UTC")
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: got %v, want an *Error", tt.entry, err)
			continue
		}
		if e.Index != 1 || e.Entry != tt.entry || e.Msg != tt.want {
			t.Errorf("%q: got %#v, want Index 1, Msg %s", tt.entry, e, tt.want)
		}
	}

	_, err := Parse([]string{"Sat 10:00-14:00", "Mon-Fry 09:00-18:00"}, "UTC")
	if got, want := err.Error(), `schedule.active_hours[1] "Mon-Fry 09:00-18:00": "Fry" is not a day (did you mean Fri?)`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
