// Package orchestrator is the loop engine and its policy: the end-of-loop
// check, failure recording, human responses and the loop runner. Its state
// lives in two markdown files handled by package issuequeue.
package orchestrator
