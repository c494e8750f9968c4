// Package example holds the complete, commented example state directory
// (.orchestrator.example in the source tree), embedded in the binary for
// "init --example" and "demo". It is the module's root package only
// because an embedded directory must lie below the package that embeds
// it; the loop engine is package orchestrator, in orchestrator/, and the
// command is cmd/orchestrator.
package example

import "embed"

// FS is the example state directory. Its paths are rooted at Root.
//
//go:embed all:.orchestrator.example
var FS embed.FS

// Root is the directory inside FS that holds the state files.
const Root = ".orchestrator.example"
