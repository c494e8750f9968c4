# A simulated improvement loop: "work", then a QA step that files what broke.
# A real setup runs an agent CLI here; see the README.
echo "agent: loop $ORCHESTRATOR_LOOP ($ORCHESTRATOR_LOOP_KIND)"
if [ "$ORCHESTRATOR_LOOP_KIND" = regular ]; then
  echo "agent: implementing this run's tasks"
  echo "tasks done in run $ORCHESTRATOR_RUN_ID" > demo-work.txt
  echo "qa: GET /health returned 500; filing a critical issue"
  id=$(printf 'GET /health -> 500 Internal Server Error\npanic: runtime error: invalid memory address or nil pointer dereference\n' |
    orchestrator add --summary "API returns 500 on /health" --type bug --priority critical \
      --auto-retry --blocking --verify server --category backend --source generated --details-file -)
  echo "qa: filed $id"
else
  echo "agent: retrying $ORCHESTRATOR_ISSUES (tier $ORCHESTRATOR_RETRY_TIER) with the context in $ORCHESTRATOR_RETRY_CONTEXT:"
  grep -m 3 -E 'retry attempt|<type>|User provided fix' "$ORCHESTRATOR_RETRY_CONTEXT" | sed 's/^ */  | /'
  echo "fix attempt $ORCHESTRATOR_LOOP" >> demo-work.txt
  echo "agent: applied a fix"
fi
