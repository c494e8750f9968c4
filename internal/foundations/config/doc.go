// Package config loads config.toml, the settings people write for orchestrator,
// and applies the environment and command-line flags over it.
//
// Precedence, highest first: flag > environment > file > defaults. [Load] and
// [LoadOptional] read the file and then the environment; the command line then
// calls [Config.Set] for each flag it maps onto a key.
//
// Keys are named as in the file, dotted: "loop.max_loops",
// "auto_retry.max_retries_by_type.build", "verify.build.command". The
// environment variable for a key is ORCHESTRATOR_ followed by the key in upper
// case with every character other than a letter or digit replaced by "_":
// ORCHESTRATOR_LOOP_MAX_LOOPS, ORCHESTRATOR_AUTO_RETRY_MAX_RETRIES_BY_TYPE_BUILD,
// ORCHESTRATOR_VERIFY_BUILD_COMMAND. The environment and flags use the same
// text syntax:
//
//   - whole numbers and numbers in Go syntax ("20", "0.2");
//   - booleans as true/false, 1/0, yes/no;
//   - durations in Go syntax ("30m", "1h30m");
//   - lists as comma-separated items with surrounding spaces trimmed
//     ("rate limit, 429"), or as a TOML array when an item contains a comma
//     (`['\d{1,3} ms', 'x']`).
//
// An empty environment variable counts as unset. The environment overrides
// entries of the two open tables ([auto_retry.max_retries_by_type] and the
// [verify.NAME] checks) that the file or the defaults define; it does not
// create new ones. [Config.CheckEnviron] reports variables that look like
// settings but are not.
package config
