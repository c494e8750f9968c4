package main

import (
	"path/filepath"

	"github.com/autoretry/orchestrator"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/metrics"
)

// metricsHook returns what the runner calls after every loop: writing the
// [metrics] textfile, when one is configured.
func (e *env) metricsHook() func() error {
	cfg, err := e.config()
	if err != nil || cfg.Metrics.Textfile == "" {
		return nil
	}
	return func() error { return writeMetrics(e.dir, cfg.Metrics.Textfile) }
}

// writeMetrics writes the Prometheus textfile from the state directory's
// history and logs. A relative path is relative to the state directory.
func writeMetrics(dir, path string) error {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	hist, _ := orchestrator.ReadHistory(dir)
	evs, _ := orchestrator.ReadEvents(dir)
	snap := metrics.Compute(hist, evs)
	if q, _, err := (issuequeue.Paths{Dir: dir}).Load(); err == nil {
		snap.SetQueue(q)
	}
	return metrics.WriteFile(path, snap)
}
