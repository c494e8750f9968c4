package schedule_test

import (
	"fmt"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/schedule"
)

func ExampleSchedule_Next() {
	s, err := schedule.Parse([]string{"Mon-Fri 09:00-18:00", "Sun 22:00-02:00"}, "America/New_York")
	if err != nil {
		fmt.Println(err)
		return
	}
	// Friday evening, after the last weekday range.
	now := time.Date(2026, 3, 6, 23, 30, 0, 0, time.UTC)
	fmt.Println(s)
	fmt.Println(s.Active(now))
	fmt.Println(s.Next(now))
	// Output:
	// Mon-Fri 09:00-18:00, Sun 22:00-02:00 (America/New_York)
	// false
	// 2026-03-08 22:00:00 -0400 EDT
}

func ExampleParse_error() {
	_, err := schedule.Parse([]string{"Mon-Fry 09:00-18:00"}, "America/New_York")
	fmt.Println(err)
	// Output:
	// schedule.active_hours[0] "Mon-Fry 09:00-18:00": "Fry" is not a day (did you mean Fri?)
}
