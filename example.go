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
