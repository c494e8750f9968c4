package templates_test

import (
	"fmt"
	"os"

	"github.com/autoretry/orchestrator/templates"
)

func ExampleSet_Render() {
	s := &templates.Set{Dir: ".orchestrator/templates", Color: false}
	err := s.Render(os.Stdout, "cap", templates.Cap{GlobalCap: 15, TotalAutoRetries: 15})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// Max auto-retries (15) reached for this run
	// ⚠️ Auto-retry limit reached. Manual intervention required.
}

func ExampleFence() {
	fmt.Println(templates.Fence("FAIL: want ```json```\n"))
	// Output:
	// ````
	// FAIL: want ```json```
	// ````
}
