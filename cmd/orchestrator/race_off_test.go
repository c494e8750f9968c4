//go:build !race

package main

// raceDetector reports whether the tests run under the race detector,
// whose shadow memory changes what the heap's page faults measure.
const raceDetector = false
