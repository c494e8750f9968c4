package main

import (
	"path/filepath"
	"time"

	"github.com/autoretry/orchestrator/internal/foundations/config"
	"github.com/autoretry/orchestrator/internal/views/metrics"
	"github.com/autoretry/orchestrator/issuequeue"
	"github.com/autoretry/orchestrator/orchestrator"
)

// metricsHook returns what the runner calls after every loop: writing the
// [metrics] textfile, when one is configured.
func (e *env) metricsHook() func() error {
	cfg, err := e.config()
	if err != nil || cfg.Metrics.Textfile == "" {
		return nil
	}
	return func() error {
		now, err := e.now()
		if err != nil {
			return err
		}
		return writeMetrics(e.dir, cfg, now)
	}
}

// writeMetrics writes the Prometheus textfile: the running totals brought
// up to date with what the last loop added to the history and the event log,
// the queue, and the budgets' last 24 hours. A relative path is relative to
// the state directory.
func writeMetrics(dir string, cfg *config.Config, now time.Time) error {
	path := cfg.Metrics.Textfile
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	snap, err := metrics.Update(dir)
	if err != nil {
		return err
	}
	if q, _, err := (issuequeue.Paths{Dir: dir}).Load(); err == nil {
		snap.SetQueue(q)
	}
	if u, err := orchestrator.ReadUsage(dir, now); err == nil {
		snap.SetBudgets(orchestrator.Budgets(cfg, u))
	}
	return metrics.WriteFile(path, snap)
}
