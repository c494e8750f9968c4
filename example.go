// Package orchestrator is the module's root. It holds only the embedded
// example state directory; the loop engine is package
// github.com/autoretry/orchestrator/orchestrator and the command is
// cmd/orchestrator.
package orchestrator

import "embed"

// Example is the complete, commented example state directory
// (.orchestrator.example in the source tree), used by "init" and "demo".
// Its paths are rooted at ".orchestrator.example".
//
//go:embed all:.orchestrator.example
var Example embed.FS

// ExampleRoot is the directory inside Example that holds the state files.
const ExampleRoot = ".orchestrator.example"
