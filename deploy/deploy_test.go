// Package deploy holds the files for running orchestrator on an existing
// scheduler (a Kubernetes CronJob, a systemd timer, a scheduled CI
// workflow) and the tests that check them. It is a module of its own so that
// the tool's module does not depend on the Kubernetes API types.
package deploy

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeCronJob decodes the manifest at path strictly into the real
// Kubernetes API types: its PersistentVolumeClaim, its CronJob, and how
// many documents of each kind it holds (any other kind fails).
func decodeCronJob(t *testing.T, path string) (pvc corev1.PersistentVolumeClaim, cj batchv1.CronJob, kinds map[string]int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kinds = map[string]int{}
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		kinds[meta.Kind]++
		var target any
		switch meta.Kind {
		case "PersistentVolumeClaim":
			target = &pvc
		case "CronJob":
			target = &cj
		default:
			t.Fatalf("unexpected kind %q", meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, target); err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
	}
	return pvc, cj, kinds
}

// The CronJob manifest decodes strictly into the real Kubernetes API types
// (a misspelt field fails), forbids overlapping runs, keeps the state
// directory on the PersistentVolumeClaim it declares, takes the agent's
// credentials from a Secret and runs orchestrator run --quiet.
func TestKubernetesCronJob(t *testing.T) {
	pvc, cj, _ := decodeCronJob(t, "kubernetes/cronjob.yaml")
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("the state volume is not the claim %q: %+v", pvc.Name, pod.Volumes)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !slices.Equal(c.Command[:3], []string{"orchestrator", "run", "--quiet"}) {
		t.Errorf("command %v, want orchestrator run --quiet …", c.Command)
	}
	dir := c.Command[slices.Index(c.Command, "--dir")+1]
	if len(c.VolumeMounts) != 1 || !strings.HasPrefix(dir, c.VolumeMounts[0].MountPath+"/") {
		t.Errorf("--dir %s is not on the mounted volume %+v", dir, c.VolumeMounts)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil {
		t.Errorf("the credentials do not come from a Secret: %+v", c.EnvFrom)
	}
}

// The fleet CronJob decodes strictly into the real Kubernetes API types,
// forbids overlapping runs, runs "orchestrator fleet run" over the list of
// repositories it reads from the PersistentVolumeClaim it declares (where
// their state directories live too), and takes the agent's credentials
// from a Secret.
func TestKubernetesFleetCronJob(t *testing.T) {
	pvc, cj, kinds := decodeCronJob(t, "kubernetes/fleet-cronjob.yaml")
	if kinds["CronJob"] != 1 || kinds["PersistentVolumeClaim"] != 1 {
		t.Fatalf("kinds %v, want one CronJob and one PersistentVolumeClaim", kinds)
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("concurrencyPolicy %q, want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never: a stopped run must not be run again at once", pod.RestartPolicy)
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("the volume is not the claim %q: %+v", pvc.Name, pod.Volumes)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !slices.Equal(c.Command[:3], []string{"orchestrator", "fleet", "run"}) || !slices.Contains(c.Command, "--quiet") {
		t.Errorf("command %v, want orchestrator fleet run --quiet …", c.Command)
	}
	i := slices.Index(c.Command, "--from")
	if i < 0 || i+1 >= len(c.Command) {
		t.Fatalf("command %v names no list of repositories (--from FILE)", c.Command)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != pod.Volumes[0].Name ||
		!strings.HasPrefix(c.Command[i+1], c.VolumeMounts[0].MountPath+"/") {
		t.Errorf("--from %s is not on the mounted volume %+v", c.Command[i+1], c.VolumeMounts)
	}
	if !strings.HasPrefix(c.WorkingDir+"/", c.VolumeMounts[0].MountPath+"/") {
		t.Errorf("workingDir %s is not on the volume", c.WorkingDir)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil {
		t.Errorf("the credentials do not come from a Secret: %+v", c.EnvFrom)
	}
}

// unitKeys are the keys the units may use, by section: a misspelt key is
// an error here, as systemd-analyze verify would warn.
var unitKeys = map[string][]string{
	"Unit":    {"Description", "After", "Wants"},
	"Service": {"Type", "WorkingDirectory", "ExecStart", "TimeoutStartSec"},
	"Timer":   {"OnCalendar", "Persistent", "RandomizedDelaySec"},
	"Install": {"WantedBy"},
}

func parseUnit(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unit := map[string]map[string]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if _, ok := unitKeys[section]; !ok {
				t.Errorf("%s:%d: unknown section [%s]", path, n, section)
			}
			unit[section] = map[string]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || !slices.Contains(unitKeys[section], k) {
				t.Errorf("%s:%d: %q is not a key of [%s] here", path, n, line, section)
				continue
			}
			unit[section][k] = v
		}
	}
	return unit
}

// The systemd service runs orchestrator once (oneshot, so never twice at
// once) with an absolute ExecStart; the timer starts it every 10 minutes
// and catches up after sleep. systemd-analyze verify checks both where it
// is installed.
func TestSystemdUnits(t *testing.T) {
	svc := parseUnit(t, "systemd/orchestrator.service")
	if svc["Service"]["Type"] != "oneshot" {
		t.Errorf("Type=%q, want oneshot", svc["Service"]["Type"])
	}
	exec0 := strings.Fields(svc["Service"]["ExecStart"])
	if len(exec0) < 3 || !strings.HasPrefix(exec0[0], "%h/") && !filepath.IsAbs(exec0[0]) || exec0[1] != "run" || exec0[2] != "--quiet" {
		t.Errorf("ExecStart=%q, want an absolute path and run --quiet", svc["Service"]["ExecStart"])
	}
	tm := parseUnit(t, "systemd/orchestrator.timer")
	if tm["Timer"]["OnCalendar"] == "" || tm["Timer"]["Persistent"] != "true" || tm["Install"]["WantedBy"] != "timers.target" {
		t.Errorf("timer: %+v", tm)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed here: the units were checked by the parser above only")
		return
	}
	out, err := exec.Command(analyze, "verify", "--man=false", "systemd/orchestrator.timer", "systemd/orchestrator.service").CombinedOutput()
	if err == nil {
		return
	}
	// The binary is not installed where the unit says on this machine;
	// anything else systemd-analyze says is a problem of the units.
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.Contains(l, "is not executable") {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
			break
		}
	}
}

// The scheduled CI workflow runs on a schedule, never twice at once,
// installs and runs orchestrator run --quiet, and commits the state
// directory back, the event log included.
func TestScheduledWorkflow(t *testing.T) {
	b, err := os.ReadFile("ci/orchestrator.yml")
	if err != nil {
		t.Fatal(err)
	}
	// YAML 1.1 reads the key "on" as true; GitHub reads it as "on".
	b = bytes.Replace(b, []byte("\non:\n"), []byte("\n\"on\":\n"), 1)
	var wf struct {
		On struct {
			Schedule []struct{ Cron string }
		} `json:"on"`
		Concurrency struct {
			Group            string
			CancelInProgress bool `json:"cancel-in-progress"`
		}
		Jobs map[string]struct {
			Steps []struct {
				Name, Run, Uses string
			}
		}
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.On.Schedule) == 0 || len(strings.Fields(wf.On.Schedule[0].Cron)) != 5 {
		t.Errorf("no cron schedule: %+v", wf.On)
	}
	if wf.Concurrency.Group == "" || wf.Concurrency.CancelInProgress {
		t.Errorf("concurrency %+v: runs may overlap or be cancelled mid-loop", wf.Concurrency)
	}
	var all strings.Builder
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			all.WriteString(s.Run + "\n")
		}
	}
	for _, want := range []string{"go install github.com/autoretry/orchestrator/cmd/orchestrator@", "orchestrator run --quiet",
		"git add .orchestrator", "git add -f .orchestrator/logs/retry.jsonl", "git push"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no step runs %q", want)
		}
	}
}
