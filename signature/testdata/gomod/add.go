// Package failing has tests that fail the way real tests do: with temporary
// directories, timestamps, durations, addresses, ports and a panic.
package failing

// Add returns the sum of a and b.
func Add(a, b int) int { return a + b }
