#!/usr/bin/env bash
# capture.sh — builds the failure corpus in signature/testdata/corpus from
# real failing test runs of real public projects.
#
# usage: scripts/corpus/capture.sh [-n] [-k] [-o OUTDIR] [-w WORKDIR] [PROJECT...]
#
# With no PROJECT, every project below is captured. OUTDIR defaults to
# signature/testdata/corpus; WORKDIR (the checkouts) to a fresh directory
# under ~/.cache, removed at the end unless -k is given. With -n it only
# checks that every bug applies to its project's source, running nothing.
#
# For each project it takes the project's published source from a package
# registry (the Go module proxy, Debian's packages, the npm registry), lays it
# out in two checkouts at different paths, and then, one bug at a time:
#   - applies the bug (a small source mutation) in checkout 1 and runs the
#     project's own test command: run `a`; runs it again: run `b`;
#   - applies the same bug in checkout 2 and runs the command there: run `c`;
#   - in checkout 1, adds an unrelated edit at the top of the bug's file
#     (comment lines, so every later line number shifts) and runs again:
#     run `s`;
#   - restores both checkouts.
# A bug whose command exits 0 is an error: the corpus holds failures only.
# Each project becomes one gzip'd txtar archive OUTDIR/SET/LANG-NAME.txtar.gz
# holding BUG/RUN.out (combined stdout and stderr, the last 256 KiB),
# BUG/RUN.root (the checkout directory) and BUG/cmd for every bug and run.
#
# Bug names are KIND@LOC: bugs of one KIND at different LOCs are the same
# error at another line; different KINDs are different bugs.
#
# Needs go, cargo, node and npm, perl, gzip, and /usr/bin/python3 with the
# Debian packages that signature/testdata/corpus/README.md lists; it
# installs nothing itself. A project's npm packages are fetched with npm.
# The Java projects need javac, mvn, the Debian packages the README lists
# (junit4, junit5, libsurefire-java...) and a deb-src line for the
# machine's Debian suite, from which apt-get source fetches their source.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$repo/signature/testdata/corpus
work=
keep=
dry=
while getopts o:w:kn opt; do
	case $opt in
	n) dry=1 ;;
	o) out=$(mkdir -p "$OPTARG" && cd "$OPTARG" && pwd) ;;
	w) work=$OPTARG ;;
	k) keep=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -z "$work" ]; then
	# Not under /tmp: the rules mask temporary directories, and a real
	# workspace seldom is one.
	cache=${XDG_CACHE_HOME:-$HOME/.cache}
	mkdir -p "$cache"
	work=$(mktemp -d "$cache/orchestrator-corpus.XXXXXX")
	[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work=$(cd "$work" && pwd)

maxout=262144
# Rust panics print a backtrace, as in most CI setups.
export RUST_BACKTRACE=1
tmo=600

die() { echo "capture: $*" >&2; exit 1; }
say() { echo "capture: $*" >&2; }

# mutate FILE MODE PATTERN TEXT changes FILE once, or fails:
#   sub    replaces the first match of the Perl regexp PATTERN by TEXT;
#   after  inserts the line(s) TEXT after the first line matching PATTERN.
mutate() {
	MODE=$2 PAT=$3 TEXT=$4 perl -0777 -pi -e '
		if ($ENV{MODE} eq "sub") { $n = s/$ENV{PAT}/$ENV{TEXT}/m }
		else { $n = s/^([^\n]*(?:$ENV{PAT})[^\n]*\n)/$1$ENV{TEXT}\n/m }
		END { exit($n ? 0 : 3) }' "$1" || die "$proj: pattern not found in $1: $3"
}

# shift_lines FILE inserts three comment lines at the top of FILE.
shift_lines() {
	local c='//'
	case $1 in *.py) c='#' ;; esac
	local first
	first=$(head -n1 "$1")
	if [[ $first == '#!'* ]]; then
		{ echo "$first"; printf '%s unrelated note\n%s kept above the code\n%s on purpose\n' "$c" "$c" "$c"; tail -n +2 "$1"; } >"$1.shift"
	else
		{ printf '%s unrelated note\n%s kept above the code\n%s on purpose\n' "$c" "$c" "$c"; cat "$1"; } >"$1.shift"
	fi
	mv "$1.shift" "$1"
}

# The bugs of the project being captured are parallel arrays, which main
# empties before each project.
forget_bugs() {
	bug_names=() bug_files=() bug_modes=() bug_pats=() bug_texts=() bug_cmds=()
}

# bug NAME FILE MODE PATTERN TEXT [CMD] declares one bug (see mutate); CMD
# overrides the project's test command for it.
bug() {
	bug_names+=("$1") bug_files+=("$2") bug_modes+=("$3") bug_pats+=("$4") bug_texts+=("$5")
	bug_cmds+=("${6:-}")
}

# run DIR CMD FILE runs CMD in DIR, its combined output (last 256 KiB) to
# FILE; it fails if CMD succeeds.
run() {
	local rc=0
	(cd "$1" && timeout "$tmo" bash -c "$2") >"$3.full" 2>&1 </dev/null || rc=$?
	tail -c "$maxout" "$3.full" >"$3"
	rm -f "$3.full"
	[ "$rc" -ne 0 ] || die "$proj: '$2' passed in $1 with bug $bugname"
	[ "$rc" -ne 124 ] || die "$proj: '$2' timed out in $1 with bug $bugname"
}

# capture SET LANG NAME: with the project's setup already done (the
# function src lays out a pristine checkout in the directory it is given,
# and cmd is its test command), captures every declared bug.
capture() {
	local set=$1 lang=$2 name=$3
	local pdir=$work/$lang-$name
	rm -rf "$pdir"
	local one=$pdir/ws/$name two=$pdir/second-checkout/src/$name
	local stage=$pdir/stage
	mkdir -p "$one" "$two" "$stage"
	say "$proj: laying out checkouts"
	src "$one"
	if [ -n "$dry" ]; then
		local i
		for i in "${!bug_names[@]}"; do
			cp "$one/${bug_files[$i]}" "$stage/orig"
			mutate "$one/${bug_files[$i]}" "${bug_modes[$i]}" "${bug_pats[$i]}" "${bug_texts[$i]}"
			cp "$stage/orig" "$one/${bug_files[$i]}"
		done
		say "$proj: ${#bug_names[@]} bugs apply"
		return
	fi
	cp -a "$one/." "$two/"
	# Warm up: the pristine project must pass, so every failure is the bug's.
	(cd "$one" && timeout "$tmo" bash -c "$cmd") >"$stage/pristine.out" 2>&1 </dev/null ||
		{ tail -40 "$stage/pristine.out" >&2; die "$proj: pristine tests fail"; }
	(cd "$two" && timeout "$tmo" bash -c "$cmd") >/dev/null 2>&1 </dev/null || die "$proj: pristine tests fail in checkout 2"
	local i
	for i in "${!bug_names[@]}"; do
		bugname=${bug_names[$i]}
		local f=${bug_files[$i]} c=${bug_cmds[$i]:-$cmd}
		local d=$stage/$bugname
		mkdir -p "$d"
		say "$proj: $bugname"
		printf '%s\n' "$c" >"$d/cmd"
		cp "$one/$f" "$stage/orig"
		mutate "$one/$f" "${bug_modes[$i]}" "${bug_pats[$i]}" "${bug_texts[$i]}"
		run "$one" "$c" "$d/a.out"
		run "$one" "$c" "$d/b.out"
		cp "$one/$f" "$two/$f"
		run "$two" "$c" "$d/c.out"
		shift_lines "$one/$f"
		run "$one" "$c" "$d/s.out"
		cp "$stage/orig" "$one/$f"
		cp "$stage/orig" "$two/$f"
		echo "$one" >"$d/a.root"
		echo "$one" >"$d/b.root"
		echo "$two" >"$d/c.root"
		echo "$one" >"$d/s.root"
	done
	write_archive "$set" "$lang-$name" "$stage"
}

# write_archive SET ARCHIVE STAGE writes OUT/SET/ARCHIVE.txtar.gz.
write_archive() {
	local dst=$out/$1/$2.txtar.gz stage=$3
	mkdir -p "$out/$1"
	local tmp=$stage/archive.txtar
	{
		echo "$desc"
		echo "Captured by scripts/corpus/capture.sh."
		local i b r
		for i in "${!bug_names[@]}"; do
			b=${bug_names[$i]}
			echo "-- $b/cmd --"
			cat "$stage/$b/cmd"
			for r in a b c s; do
				if grep -q '^-- .* --$' "$stage/$b/$r.out"; then
					die "$proj: $b/$r.out has a line that reads as a txtar file marker"
				fi
				echo "-- $b/$r.out --"
				cat "$stage/$b/$r.out"
				# txtar ends every file with a newline: an output that
				# lacks one gets one, as it would from txtar.Format.
				[ -z "$(tail -c1 "$stage/$b/$r.out")" ] || echo
				echo "-- $b/$r.root --"
				cat "$stage/$b/$r.root"
			done
		done
	} >"$tmp"
	gzip -9n <"$tmp" >"$dst"
	say "$proj: wrote $dst ($(wc -c <"$dst") bytes)"
}

# go_src MODULE@VERSION: the function src copies the module's source, as the
# module proxy serves it, into its directory.
go_src() {
	local dir
	dir=$(GOFLAGS=-mod=mod go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	[ -n "$dir" ] || die "$proj: go mod download $1 failed"
	eval "src() { cp -r '$dir/.' \"\$1/\"; chmod -R u+w \"\$1\"; }"
}

# py_src PACKAGE: src copies the Debian-installed Python package (which
# ships its tests) into its directory, where `python3 -m pytest` imports it.
py_src() {
	local dir=/usr/lib/python3/dist-packages/$1
	[ -d "$dir" ] || die "$proj: $dir missing (apt-get install python3-$1)"
	# Without the package's compiled speedups, so its Python code (where
	# the bugs are) is what runs.
	eval "src() {
		cp -r '$dir' \"\$1/\"
		find \"\$1\" -name __pycache__ -prune -exec rm -rf {} +
		find \"\$1\" -name '*.so' -delete
	}"
}

# rust_src CRATE-VERSION: src copies the crate from Debian's cargo registry
# and points cargo at that registry, offline.
rust_src() {
	local reg=/usr/share/cargo/registry
	[ -d "$reg/$1" ] || die "$proj: $reg/$1 missing (apt-get install librust-${1%-*}-dev)"
	eval "src() {
		cp -r '$reg/$1/.' \"\$1/\"
		mkdir -p \"\$1/.cargo\"
		printf '[source.crates-io]\nreplace-with = \"debian\"\n[source.debian]\ndirectory = \"$reg\"\n[net]\noffline = true\n' >\"\$1/.cargo/config.toml\"
	}"
}

# npm_src PACKAGE@VERSION DEVDEPS...: src unpacks the package as the npm
# registry serves it and installs DEVDEPS into its node_modules (installed
# once, then copied).
# npm_dir is the unpacked package, copied into each checkout.
npm_src() {
	local pkg=$1
	shift
	local cache=$work/npm-$pkg
	npm_dir=$cache
	if [ ! -d "$cache/node_modules" ]; then
		rm -rf "$cache"
		mkdir -p "$cache/pack"
		(cd "$cache/pack" && npm pack --silent "$pkg" >/dev/null)
		tar -xzf "$cache"/pack/*.tgz -C "$cache"
		mv "$cache/package"/* "$cache/package"/.[!.]* "$cache/" 2>/dev/null || true
		rmdir "$cache/package"
		rm -rf "$cache/pack"
		# The project's own dev tooling is not needed: only the runner.
		(cd "$cache" && node -e '
			const fs = require("fs"); const p = JSON.parse(fs.readFileSync("package.json"));
			delete p.devDependencies; delete p.scripts; p.private = true;
			fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");' &&
			npm install --silent --no-audit --no-fund --save-dev "$@" >/dev/null)
	fi
	eval "src() { cp -a '$cache/.' \"\$1/\"; }"
}

# java_deb_src SOURCE-PACKAGE: src copies the upstream source of a Debian
# source package (its orig tarball, fetched once with apt-get source, which
# needs a deb-src line for the machine's suite) into its directory.
# java_dir is the unpacked source, copied into each checkout.
java_deb_src() {
	local cache=$work/deb-$1
	java_dir=$cache/src
	if [ ! -d "$java_dir" ]; then
		rm -rf "$cache"
		mkdir -p "$cache/dl" "$java_dir"
		(cd "$cache/dl" && apt-get source --download-only --tar-only "$1" >/dev/null 2>&1) ||
			die "$proj: apt-get source $1 failed (it needs a deb-src line for the machine's Debian suite)"
		local tarball
		tarball=$(ls "$cache"/dl/*.orig.tar.*) || die "$proj: no orig tarball for $1"
		tar -xf "$tarball" -C "$java_dir" --strip-components=1
	fi
	eval "src() { cp -a '$java_dir/.' \"\$1/\"; }"
}

# --- the projects ------------------------------------------------------------
# Each, proj_LANG_NAME, sets desc, src (through *_src), cmd and its bugs;
# main then captures it into its set's LANG-NAME archive.

# train

proj_go_uuid() {
	desc="github.com/google/uuid v1.6.0 from the Go module proxy; go test."
	go_src github.com/google/uuid@v1.6.0
	cmd='go test ./...'
	bug nilderef@parse uuid.go after '^func Parse\(s string\)' $'\tvar np *int\n\t_ = *np'
	bug nilderef@parseend uuid.go sub '\t\tuuid\[i\] = v\n\t\}\n\treturn uuid, nil\n' $'\t\tuuid[i] = v\n\t}\n\tvar np *int\n\t_ = *np\n\treturn uuid, nil\n'
	bug nilderef@string uuid.go after '^func \(uuid UUID\) String\(\) string' $'\tvar np *int\n\t_ = *np'
	bug flipcmp@validate uuid.go sub "if s\[0\] != '\{' \|\| s\[len\(s\)-1\] != '\}'" "if s[0] == '{' || s[len(s)-1] != '}'"
	bug offbyone@encodehex uuid.go sub 'hex.Encode\(dst\[9:13\], uuid\[4:6\]\)' 'hex.Encode(dst[9:13], uuid[3:5])' 'go test -v ./...'
	bug syntax@string uuid.go sub 'encodeHex\(buf\[:\], uuid\)' 'encodeHex(buf[:], uuid'
	bug syntax@urn uuid.go sub 'encodeHex\(buf\[9:\], uuid\)' 'encodeHex(buf[9:], uuid'
	bug syntax@version4 version4.go sub 'return NewRandomFromReader\(rander\)' 'return NewRandomFromReader(rander'
	bug vetprintf@validate uuid.go sub 'return fmt.Errorf\("invalid urn prefix: %q", s\[:9\]\)\n\t\t\}\n\t\ts = s\[9:\]\n\n\t// UUID enclosed' $'return fmt.Errorf("invalid urn prefix: %d", s[:9])\n\t\t}\n\t\ts = s[9:]\n\n\t// UUID enclosed' 'go vet ./...'
	bug wrongconst@version version4.go sub 'uuid\[6\] = \(uuid\[6\] & 0x0f\) \| 0x40' 'uuid[6] = (uuid[6] & 0x0f) | 0x30'
}

proj_go_sync() {
	desc="golang.org/x/sync v0.7.0 from the Go module proxy; go test, -race, -v."
	go_src golang.org/x/sync@v0.7.0
	cmd='go test ./...'
	bug race@errgroupgo errgroup/errgroup.go sub 'g\.errOnce\.Do\(func\(\) \{\n\t\t\t\tg\.err = err\n\t\t\t\tif g\.cancel != nil \{\n\t\t\t\t\tg\.cancel\(g\.err\)\n\t\t\t\t\}\n\t\t\t\}\)' $'func() {\n\t\t\t\tg.err = err\n\t\t\t\tif g.cancel != nil {\n\t\t\t\t\tg.cancel(g.err)\n\t\t\t\t}\n\t\t\t}()' 'go test -race ./...'
	bug removedline@errgroupwait errgroup/errgroup.go sub '\tg\.wg\.Wait\(\)\n\tif g\.cancel' $'\tif g.cancel'
	bug nilderef@singleflightdo singleflight/singleflight.go after '^func \(g \*Group\) Do\(' $'\tvar np *int\n\t_ = *np'
	bug nilderef@errgroupgo errgroup/errgroup.go after '^func \(g \*Group\) Go\(' $'\tvar np *int\n\t_ = *np'
	bug flipcmp@acquire semaphore/semaphore.go sub 'if s\.size-s\.cur >= n && s\.waiters\.Len\(\) == 0' 'if s.size-s.cur > n && s.waiters.Len() == 0' 'go test -v ./...'
	bug typeerr@syncmap syncmap/map.go sub 'package syncmap' $'package syncmap\n\nvar typeMismatch int = "x"'
}

proj_go_humanize() {
	desc="github.com/dustin/go-humanize v1.0.1 from the Go module proxy; go test, -v, -json."
	go_src github.com/dustin/go-humanize@v1.0.1
	cmd='go test ./...'
	bug wrongconst@bytes bytes.go sub 'KByte = IByte \* 1000' 'KByte = IByte * 1024'
	bug offbyone@comma comma.go sub 'for v > 999 \{' 'for v > 1000 {'
	bug flipcmp@ordinal ordinals.go sub 'if x%100 != 12 \{' 'if x%100 == 12 {' 'go test -v ./...'
	bug dupcase@ordinal ordinals.go sub 'case 3:' 'case 2:'
	bug nilderef@ftoa ftoa.go after '^func FormatFloat\(|^func Ftoa\(' $'\tvar np *int\n\t_ = *np'
	bug nilderef@si si.go after '^func ComputeSI\(' $'\tvar np *int\n\t_ = *np'
	bug wrongconst@siprefix si.go sub '3:   "k", // kilo' '3:   "K", // kilo' 'go test -json ./...'
	bug undefined@times times.go sub 'func Time\(then time\.Time\) string \{\n\treturn RelTime\(' $'func Time(then time.Time) string {\n\treturn RelTimeX('
}

proj_py_simplejson() {
	desc="simplejson from Debian's python3-simplejson (tests shipped in the package); pytest."
	py_src simplejson
	cmd='/usr/bin/python3 -m pytest simplejson/tests'
	bug flipcmp@encoder simplejson/encoder.py sub "if o != o:" "if o == o:"
	bug wrongconst@indent simplejson/encoder.py sub "self\.item_separator = ','" "self.item_separator = ';'"
	bug typeerr@decoder simplejson/decoder.py sub 'def py_scanstring\(s, end, encoding=None, strict=True,' 'def py_scanstring(s, end, encoding=None, strict=True, _x,'
	bug attrerr@dumps simplejson/__init__.py sub '^    if cls is None:\n        cls = JSONEncoder\n' $'    None.missing_attribute\n    if cls is None:\n        cls = JSONEncoder\n'
	bug attrerr@loads simplejson/__init__.py sub '^    if cls is None:\n        cls = JSONDecoder\n' $'    None.missing_attribute\n    if cls is None:\n        cls = JSONDecoder\n'
	bug wrongconst@infinity simplejson/encoder.py sub "text = 'Infinity'" "text = 'Inf'" '/usr/bin/python3 -m unittest discover -s simplejson/tests -t .'
	bug removedline@scanstring simplejson/decoder.py sub '\n\s*idx \+= 1\n' $'\n'
}

proj_rust_semver() {
	desc="semver 1.0.14 from Debian's librust-semver-dev; cargo test, offline."
	rust_src semver-1.0.14
	cmd='cargo test'
	bug flipcmp@eval src/eval.rs sub 'return ver\.major > cmp\.major;' 'return ver.major < cmp.major;'
	bug offbyone@parse src/parse.rs sub "b'0'\.\.=b'9'" "b'1'..=b'9'"
	bug wrongconst@display src/display.rs sub 'write!\(formatter, "\{\}\.\{\}\.\{\}"' 'write!(formatter, "{}.{}-{}"'
	bug unwrapnone@versionparse src/parse.rs after 'let mut pos = Position::Major;' '        let _: u8 = None.unwrap();'
	bug unwrapnone@reqparse src/parse.rs after "let text = text\.trim_start_matches\(' '\);" '        let _: u8 = None.unwrap();'
	bug typeerr@identifier src/identifier.rs after '^use core::mem;' 'const MISMATCH: u8 = "x";'
}

proj_js_papaparse() {
	desc="papaparse 5.4.1 from the npm registry (tests shipped in the package); its mocha-style tests under jest 29 and vitest 3."
	npm_src papaparse@5.4.1 jest@29 vitest@3 chai@4
	# Jest runs its mocha-style tests (describe, it, done, chai's assert) as
	# they are, but for the few that read files through a browser's
	# XMLHttpRequest, which node lacks; vitest, which has no done callback,
	# runs them less the two groups that use one.
	cmd="npx jest --ci --testMatch '**/tests/test-cases.js' -t '^(?!.*(Simple file|lots of empty lines|Complete is called with all results if neither|Step exposes indexes for|Quoted line breaks near chunk)).*'"
	printf '%s\n' "export default { test: { include: ['tests/test-cases.js'], globals: true } };" >"$npm_dir/vitest.config.mjs"
	local vitest="npx vitest run -t '^(?!(Parse Async Tests|Custom Tests) )'"
	bug flipcmp@guessdelim papaparse.js sub 'if \(\(typeof bestDelta === .undefined. \|\| delta <= bestDelta\)' 'if ((typeof bestDelta === '"'"'undefined'"'"' || delta > bestDelta)'
	bug wrongconst@unparse papaparse.js sub "var _delimiter = ',';" "var _delimiter = ';';"
	bug typeerr@parser papaparse.js sub '\tfunction Parser\(config\)\n\t\{\n' $'\tfunction Parser(config)\n\t{\n\t\tvar missing = null; missing.config = config;\n'
	bug typeerr@jsontocsv papaparse.js sub '\tfunction JsonToCsv\(_input, _config\)\n\t\{\n' $'\tfunction JsonToCsv(_input, _config)\n\t{\n\t\tvar missing = null; missing.config = _config;\n'
	bug syntax@parser papaparse.js sub '\tfunction Parser\(config\)\n\t\{\n' $'\tfunction Parser(config\n\t{\n'
	bug offbyone@newline papaparse.js sub 'numWithN >= r\.length / 2' 'numWithN >= r.length / 2 + 1'
	bug wrongconst@quote papaparse.js sub "var _quoteChar = '\"';" "var _quoteChar = \"'\";" "$vitest"
	bug nullref@serialize papaparse.js sub '\t\tfunction serialize\(fields, data, skipEmptyLines\)\n\t\t\{\n' $'\t\tfunction serialize(fields, data, skipEmptyLines)\n\t\t{\n\t\t\tvar missing = null; missing.fields = fields;\n' "$vitest"
	bug nullref@guessdelim papaparse.js sub '\t\tfunction guessDelimiter\(input, newline, skipEmptyLines, comments, delimitersToGuess\) \{\n' $'\t\tfunction guessDelimiter(input, newline, skipEmptyLines, comments, delimitersToGuess) {\n\t\t\tvar missing = null; missing.fields = input;\n' "$vitest"
}

proj_ts_typefest() {
	desc="type-fest 4.10.0 (TypeScript types) from the npm registry; tsc 5.3, plain and --pretty."
	npm_src type-fest@4.10.0 typescript@5.3
	cmd='npx tsc --noEmit --strict --target es2022 --lib es2022,dom index.d.ts'
	local pretty="$cmd --pretty"
	bug typo@partialdeepmap source/partial-deep.d.ts sub 'T extends ReadonlyMap<infer KeyType, infer ValueType>' 'T extends ReadonlyMapp<infer KeyType, infer ValueType>'
	bug typo@partialdeephelper source/partial-deep.d.ts sub '\{\} & ReadonlyMap<PartialDeep<KeyType, Options>' '{} & ReadonlyMapp<PartialDeep<KeyType, Options>'
	bug arity@readonlydeep source/readonly-deep.d.ts sub 'Readonly<ReadonlyMap<ReadonlyDeep<KeyType>, ' 'Readonly<ReadonlyMap<ReadonlyDeep<KeyType, ValueType>, ' "$pretty"
	bug syntax@simplify source/simplify.d.ts sub 'export type Simplify<T> = \{\[KeyType in keyof T\]: T\[KeyType\]\} & \{\};' 'export type Simplify<T> = {[KeyType in keyof T: T[KeyType]} & {};' "$pretty"
	bug badimport@merge source/merge.d.ts sub 'import type \{Simplify\} from .\./simplify.;' "import type {Simplify} from './simplifies';"
}

# holdout

proj_go_cmp() {
	desc="github.com/google/go-cmp v0.6.0 from the Go module proxy; go test, -race, -v (parallel subtests)."
	go_src github.com/google/go-cmp@v0.6.0
	cmd='go test ./...'
	bug flipcmp@interface cmp/compare.go sub 'if vx\.Type\(\) != vy\.Type\(\) \{' 'if vx.Type() == vy.Type() {' 'go test -race ./...'
	bug wrongconst@context cmp/report_compare.go sub 'const numContextRecords = 2' 'const numContextRecords = 3'
	bug nilderef@compareptr cmp/compare.go after '^func \(s \*state\) comparePtr\(' $'\tvar np *int\n\t_ = *np'
	bug nilderef@compareptrelem cmp/compare.go sub '\tvx, vy = vx\.Elem\(\), vy\.Elem\(\)\n\ts\.compareAny\(Indirect' $'\tvar np *int\n\t_ = *np\n\tvx, vy = vx.Elem(), vy.Elem()\n\ts.compareAny(Indirect'
	bug nilderef@compareinterface cmp/compare.go after '^func \(s \*state\) compareInterface\(' $'\tvar np *int\n\t_ = *np'
	bug offbyone@verbosity cmp/report_compare.go sub 'if i >= maxVerbosityPreset \{' 'if i > maxVerbosityPreset {' 'go test -v ./...'
	bug syntax@path cmp/path.go sub '^package cmp\n' $'package cmp\n\nfunc broken( {}\n'
}

proj_go_pflag() {
	desc="github.com/spf13/pflag v1.0.5 from the Go module proxy; go test -vet=off, -v, -json."
	go_src github.com/spf13/pflag@v1.0.5
	# Its tests fail today's vet (a redundant newline in a Println).
	cmd='go test -vet=off ./...'
	bug offbyone@longarg flag.go sub 'name := s\[2:\]' 'name := s[1:]'
	bug flipcmp@split flag.go sub "if len\(split\) == 2 \{\n\t\t// '--flag=arg'" $'if len(split) != 2 {\n\t\t// \'--flag=arg\''
	bug unused@longarg flag.go sub '\tname := s\[2:\]\n' $'\tname := s[2:]\n\tunused := 0\n'
	bug unused@set flag.go sub '\tnormalName := f\.normalizeFlagName\(name\)\n\tflag, ok := f\.formal\[normalName\]\n' $'\tnormalName := f.normalizeFlagName(name)\n\tunused := 0\n\tflag, ok := f.formal[normalName]\n'
	bug nilderef@set flag.go after '^func \(f \*FlagSet\) Set\(name, value string\) error' $'\tvar np *int\n\t_ = *np' 'go test -vet=off -v ./...'
	bug nilderef@setvalue flag.go sub '\n\terr := flag\.Value\.Set\(value\)\n' $'\n\tvar np *int\n\t_ = *np\n\terr := flag.Value.Set(value)\n' 'go test -vet=off -v ./...'
	bug offbyone@intstring int.go sub 'return strconv\.Itoa\(int\(\*i\)\)' 'return strconv.Itoa(int(*i) + 1)' 'go test -vet=off -json ./...'
	bug undefined@bool bool.go sub 'strconv\.ParseBool\(' 'strconv.ParseBoolean('
}

proj_py_toolz() {
	desc="toolz from Debian's python3-toolz (tests shipped in the package); pytest."
	py_src toolz
	cmd='/usr/bin/python3 -m pytest toolz/tests'
	bug wrongsign@tail toolz/itertoolz.py sub 'return seq\[-n:\]' 'return seq[n:]'
	bug offbyone@take toolz/itertoolz.py sub 'return itertools\.islice\(seq, n\)' 'return itertools.islice(seq, n + 1)'
	bug nameerr@merge toolz/dicttoolz.py after '^def merge\(' '    undefined_helper()'
	bug nameerr@assoc toolz/dicttoolz.py after '^def assoc\(' '    undefined_helper()'
	bug removedline@getin toolz/dicttoolz.py sub '\n(\s*)return reduce\(operator\.getitem, keys, coll\)\n' $'\n\\1reduce(operator.getitem, keys, coll)\n'
}

proj_py_jsonschema() {
	desc="jsonschema 4.10.3 from Debian's python3-jsonschema (tests shipped in the package, without the external JSON-Schema-Test-Suite); unittest."
	py_src jsonschema
	cmd='rm -f jsonschema/tests/test_jsonschema_test_suite.py && /usr/bin/python3 -m unittest discover -s jsonschema/tests -t .'
	bug offbyone@maxitems jsonschema/_validators.py sub 'len\(instance\) > mI:' 'len(instance) > mI + 1:'
	bug wrongmsg@required jsonschema/_validators.py sub 'is a required property' 'is a required field'
	bug attrerr@minlength jsonschema/_validators.py after '^def minLength\(' '    None.missing_attribute'
	bug attrerr@required jsonschema/_validators.py after '^def required\(' '    None.missing_attribute'
	bug syntax@exceptions jsonschema/exceptions.py after '^class _Error\(' '    def broken(self:'
}

proj_rust_strsim() {
	desc="strsim 0.10.0 from Debian's librust-strsim-dev; cargo test (with doctests), offline."
	rust_src strsim-0.10.0
	cmd='cargo test'
	bug wrongconst@jarowinkler src/lib.rs sub '0\.1 \* prefix_length as f64' '0.2 * prefix_length as f64'
	bug offbyone@levenshtein src/lib.rs sub 'result = i \+ 1;' 'result = i;'
	bug unwrapnone@hamming src/lib.rs after '^pub fn hamming\(a: &str, b: &str\)' '    let _: u8 = None.unwrap();'
	bug unwrapnone@levenshtein src/lib.rs after '^pub fn levenshtein\(a: &str, b: &str\)' '    let _: u8 = None.unwrap();'
	bug typeerr@osa src/lib.rs sub 'if a == b \{ return 0; \}' 'if a == b { return "0"; }'
}

proj_js_minimist() {
	desc="minimist 1.2.8 from the npm registry (tests shipped in the package); tape."
	npm_src minimist@1.2.8 tape@5
	cmd="npx tape 'test/*.js'"
	bug flipcmp@isnumber index.js sub "if \(typeof x === 'number'\) \{ return true; \}" "if (typeof x !== 'number') { return true; }"
	bug wrongconst@dashdash index.js sub "args\.indexOf\('--'\) !== -1" "args.indexOf('-') !== -1"
	bug typeerr@setarg index.js after '^\tfunction setArg\(' '		var missing = null; missing.key = key;'
	bug typeerr@argdefined index.js after '^\tfunction argDefined\(' '		var missing = null; missing.key = key;'
	bug offbyone@shortflags index.js sub 'var letters = arg\.slice\(1, -1\)\.split\(..\);' "var letters = arg.slice(1).split('');"
}

proj_js_url() {
	desc="url 0.11.0 (node's url module for browsers) from the npm registry (tests shipped in the package); its mocha qunit-style tests under vitest 3."
	npm_src url@0.11.0 vitest@3
	# Its tests are mocha's qunit style (a global test, node's assert):
	# vitest runs them with its globals on.
	printf '%s\n' "export default { test: { include: ['test.js'], globals: true } };" >"$npm_dir/vitest.config.mjs"
	cmd='npx vitest run'
	bug offbyone@port url.js sub 'this\.port = port\.substr\(1\);' 'this.port = port.substr(2);'
	bug flipcmp@port url.js sub "if \(port !== ':'\) \{" "if (port === ':') {"
	bug removedcall@hostname url.js sub 'this\.hostname = this\.hostname\.toLowerCase\(\);' 'this.hostname = this.hostname;'
	bug typeerr@format url.js after '^Url\.prototype\.format = function\(\) \{' '  var missing = null; missing.auth = this.auth;'
	bug typeerr@parsehost url.js after '^Url\.prototype\.parseHost = function\(\) \{' '  var missing = null; missing.host = this.host;'
	bug syntax@resolve url.js sub 'Url\.prototype\.resolve = function\(relative\) \{' 'Url.prototype.resolve = function(relative {'
}

# blind: other projects and other bugs again, captured once the rules were
# settled and never used to tune them; the bar is measured on them as they
# come.

proj_go_lru() {
	desc="github.com/hashicorp/golang-lru/v2 v2.0.7 from the Go module proxy; go test, -race, -v."
	go_src github.com/hashicorp/golang-lru/v2@v2.0.7
	# Three of its expirable tests sleep and expect the cache to expire
	# entries on time, which fails on a loaded machine: left out of every
	# run.
	local skip="-skip '^(ExampleLRU|TestLRUWithPurge|TestLoadingExpired)\$'"
	cmd="go test $skip ./..."
	bug race@expirableadd expirable/expirable_lru.go sub '\) Add\(key K, value V\) \(evicted bool\) \{\n\tc\.mu\.Lock\(\)\n\tdefer c\.mu\.Unlock\(\)\n' $') Add(key K, value V) (evicted bool) {\n' "go test -race $skip ./..."
	bug nilderef@simpleadd simplelru/lru.go after '^func \(c \*LRU\[K, V\]\) Add\(' $'\tvar np *int\n\t_ = *np'
	bug nilderef@simpleget simplelru/lru.go after '^func \(c \*LRU\[K, V\]\) Get\(' $'\tvar np *int\n\t_ = *np'
	bug flipcmp@evict simplelru/lru.go sub 'evict := c\.evictList\.Length\(\) > c\.size' 'evict := c.evictList.Length() >= c.size' "go test -v $skip ./..."
	bug offbyone@resize simplelru/lru.go sub 'for i := 0; i < diff; i\+\+ \{' 'for i := 0; i <= diff; i++ {' "go test -race -v $skip ./..."
	bug removedline@removeelement simplelru/lru.go sub '\tdelete\(c\.items, e\.Key\)\n' ''
}

proj_go_xxhash() {
	desc="github.com/cespare/xxhash/v2 v2.3.0 from the Go module proxy; go test, -v, go vet."
	go_src github.com/cespare/xxhash/v2@v2.3.0
	cmd='go test ./...'
	bug syntax@round xxhash.go sub 'acc = rol31\(acc\)' 'acc = rol31(acc'
	bug syntax@mergeround xxhash.go sub 'val = round\(0, val\)' 'val = round(0, val'
	bug undefined@u64 xxhash.go sub 'return binary\.LittleEndian\.Uint64\(b\)' 'return binary.LittleEndian.Uint64x(b)'
	bug vetconv@unmarshal xxhash.go sub '\tcopy\(d\.mem\[:\], b\)\n' $'\tcopy(d.mem[:], b)\n\t_ = string(d.n)\n' 'go vet ./...'
	bug vetconv@reset xxhash.go after '^func \(d \*Digest\) ResetWithSeed\(' $'\t_ = string(d.n)' 'go vet ./...'
	bug wrongconst@prime xxhash.go sub 'prime1 uint64 = 11400714785074694791' 'prime1 uint64 = 11400714785074694790' 'go test -v ./...'
}

proj_py_bs4() {
	desc="beautifulsoup4 from Debian's python3-bs4 (tests shipped in the package); pytest."
	py_src bs4
	cmd='/usr/bin/python3 -m pytest bs4/tests'
	bug wrongconst@gettext bs4/element.py sub 'def get_text\(self, separator="",' 'def get_text(self, separator=" ",'
	bug attrerr@extract bs4/element.py after '^    def extract\(self, _self_index=None\):' '        None.missing_attribute'
	bug attrerr@decompose bs4/element.py after '^    def decompose\(self\):' '        None.missing_attribute'
	bug removedline@decompose bs4/element.py sub '\n            i\._decomposed = True\n' $'\n'
	bug flipcmp@extract bs4/element.py sub 'if self\.parent is not None:\n            if _self_index is None:' $'if self.parent is None:\n            if _self_index is None:'
}

proj_rust_heck() {
	desc="heck 0.4.0 from Debian's librust-heck-dev; cargo test (with doctests), offline."
	rust_src heck-0.4.0
	cmd='cargo test'
	bug wrongconst@kebab src/kebab.rs sub 'write!\(f, "-"\)' 'write!(f, "+")'
	bug unwrapnone@uppercase src/lib.rs after '^fn uppercase\(' '    let _: u8 = None.unwrap();'
	bug unwrapnone@capitalize src/lib.rs after '^fn capitalize\(' '    let _: u8 = None.unwrap();'
	bug typeerr@lowercase src/lib.rs after '^fn lowercase\(' '    let _: u8 = "x";'
	bug wrongcall@capitalize src/lib.rs sub 'lowercase\(&s\[i\.\.\], f\)\?;' 'uppercase(&s[i..], f)?;'
}

proj_js_pathbrowserify() {
	desc="path-browserify 1.0.1 (node's path module for browsers) from the npm registry (tests shipped in the package); its tape tests under jest 29."
	npm_src path-browserify@1.0.1 jest@29
	# Its tests are tape's (test(name, t => ...), t.strictEqual...): jest
	# runs them through a small tape of its own built on node's assert
	# (skipped tests stay skipped).
	cat >"$npm_dir/tape-jest.js" <<-'EOF'
	'use strict';
	var assert = require('assert');
	module.exports = function tape(name, opts, fn) {
		if (typeof opts === 'function') {
			fn = opts;
			opts = {};
		}
		(opts.skip ? test.skip : test)(name, function () {
			return new Promise(function (resolve) {
				fn({
					strictEqual: assert.strictEqual, equal: assert.strictEqual,
					deepEqual: assert.deepStrictEqual, ok: assert.ok,
					throws: assert.throws, end: resolve
				});
			});
		});
	};
	EOF
	printf '%s\n' "module.exports = { testMatch: ['**/test/test-*.js'], moduleNameMapper: { '^tape\$': '<rootDir>/tape-jest.js' } };" >"$npm_dir/jest.config.js"
	cmd='npx jest --ci'
	bug flipcmp@isabsolute index.js sub 'return path\.length > 0 && path\.charCodeAt\(0\) === 47' 'return path.length > 0 && path.charCodeAt(0) !== 47'
	bug typeerr@dirname index.js after '^  dirname: function dirname\(path\) \{' '    var missing = null; missing.path = path;'
	bug typeerr@extname index.js after '^  extname: function extname\(path\) \{' '    var missing = null; missing.path = path;'
	bug syntax@join index.js sub 'join: function join\(\) \{' 'join: function join( {'
	bug wrongconst@delimiter index.js sub "delimiter: ':'," "delimiter: ';',"
}

# blind2: six more projects and bugs, captured after the rules were changed
# again and never used to tune them.

proj_go_time() {
	desc="golang.org/x/time v0.16.0 from the Go module proxy; go test, -race, -v, -json."
	go_src golang.org/x/time@v0.16.0
	cmd='go test ./...'
	bug race@reserven rate/rate.go sub 'Reservation \{\n\tlim\.mu\.Lock\(\)\n\tdefer lim\.mu\.Unlock\(\)\n\n' $'Reservation {\n' 'go test -race ./...'
	bug flipcmp@advance rate/rate.go sub 'if burst := float64\(lim\.burst\); tokens > burst \{' 'if burst := float64(lim.burst); tokens < burst {'
	bug offbyone@sometimes rate/sometimes.go sub '\(s\.First > 0 && s\.count < s\.First\)' '(s.First > 0 && s.count <= s.First)' 'go test -v ./...'
	bug nilderef@setburstat rate/rate.go after '^func \(lim \*Limiter\) SetBurstAt\(' $'\tlim = nil' 'go test -json ./...'
	bug nilderef@cancelat rate/rate.go after '^func \(r \*Reservation\) CancelAt\(' $'\tr.lim = nil' 'go test -json ./...'
	bug wrongconst@durationfromtokens rate/rate.go sub 'duration := \(tokens / float64\(limit\)\) \* float64\(time\.Second\)' 'duration := (tokens / float64(limit)) * float64(time.Millisecond)'
}

proj_go_btree() {
	desc="github.com/google/btree v1.1.3 from the Go module proxy; go test, -race, -v, -json."
	go_src github.com/google/btree@v1.1.3
	cmd='go test ./...'
	bug race@freenode btree_generic.go sub '\tf\.mu\.Lock\(\)\n\tif len\(f\.freelist\) < cap\(f\.freelist\) \{\n\t\tf\.freelist = append\(f\.freelist, n\)\n\t\tout = true\n\t\}\n\tf\.mu\.Unlock\(\)\n' $'\tif len(f.freelist) < cap(f.freelist) {\n\t\tf.freelist = append(f.freelist, n)\n\t\tout = true\n\t}\n' 'go test -race ./...'
	bug offbyone@split btree_generic.go sub 'next\.items = append\(next\.items, n\.items\[i\+1:\]\.\.\.\)' 'next.items = append(next.items, n.items[i:]...)' 'go test -v ./...'
	bug flipcmp@find btree_generic.go sub 'if i > 0 && !less\(s\[i-1\], item\) \{' 'if i > 0 && less(s[i-1], item) {'
	bug syntax@insertat btree_generic.go sub '\t\tcopy\(\(\*s\)\[index\+1:\], \(\*s\)\[index:\]\)\n' $'\t\tcopy((*s)[index+1:], (*s)[index:]\n'
	bug syntax@removeat btree_generic.go sub '\tcopy\(\(\*s\)\[index:\], \(\*s\)\[index\+1:\]\)\n' $'\tcopy((*s)[index:], (*s)[index+1:]\n'
	bug removedline@removeat btree_generic.go sub '\tvar zero T\n\t\(\*s\)\[len\(\*s\)-1\] = zero\n\t\*s = \(\*s\)\[:len\(\*s\)-1\]\n' $'\tvar zero T\n\t(*s)[len(*s)-1] = zero\n' 'go test -json ./...'
}

proj_py_colorama() {
	desc="colorama 0.4.6 from Debian's python3-colorama (tests shipped in the package); pytest, -v."
	py_src colorama
	cmd='/usr/bin/python3 -m pytest colorama/tests'
	bug wrongconst@backred colorama/ansi.py sub 'RED             = 41' 'RED             = 42'
	bug offbyone@plaintext colorama/ansitowin32.py sub 'self\.wrapped\.write\(text\[start:end\]\)' 'self.wrapped.write(text[start:end - 1])'
	bug removedline@cursor colorama/ansitowin32.py sub '\n            cursor = end\n' $'\n'
	bug flipcmp@osc colorama/ansitowin32.py sub "if params\[0\] in '02':" "if params[0] not in '02':" '/usr/bin/python3 -m pytest -v colorama/tests'
	bug attrerr@plaintext colorama/ansitowin32.py sub 'self\.wrapped\.write\(text\[start:end\]\)' 'self.wraped.write(text[start:end])'
	bug attrerr@write colorama/ansitowin32.py sub '            self\.wrapped\.write\(text\)\n' $'            self.wraped.write(text)\n'
}

proj_py_isodate() {
	desc="isodate 0.6.1 from Debian's python3-isodate (tests shipped in the package); unittest."
	py_src isodate
	cmd='/usr/bin/python3 -m unittest discover -s isodate/tests -t .'
	bug flipcmp@maxdays isodate/duration.py sub 'if other\.day > maxdays:' 'if other.day < maxdays:'
	bug offbyone@monthstr isodate/duration.py sub 'if self\.months <= 1:' 'if self.months < 1:'
	bug nameerr@parsedate isodate/isodates.py sub 'groups = match\.groupdict\(\)' 'groups = matc.groupdict()'
	bug nameerr@parsetime isodate/isotime.py sub 'groups = match\.groupdict\(\)' 'groups = matc.groupdict()'
	bug wrongconst@microsecond isodate/isotime.py sub 'microsecond = \(second - int\(second\)\) \* int\(1e6\)' 'microsecond = (second - int(second)) * int(1e5)'
	bug removedline@durationdefault isodate/isoduration.py sub '\n            if val is None:\n                groups\[key\] = "0n"\n' $'\n'
}

proj_rust_itoa() {
	desc="itoa 1.0.1 from Debian's librust-itoa-dev; cargo test (with doctests), offline."
	rust_src itoa-1.0.1
	cmd='cargo test'
	bug wrongconst@lut src/lib.rs sub '0001020304050607080910111213141516171819' '0001020304050607080910111213141516171918'
	bug flipcmp@nonnegative src/lib.rs sub 'let is_nonnegative = self >= 0;' 'let is_nonnegative = self < 0;'
	bug offbyone@lastdigit src/lib.rs sub "\*buf_ptr\.offset\(curr\) = \(n as u8\) \+ b'0';" "*buf_ptr.offset(curr) = (n as u8 + 1) + b'0';"
	bug unwrapnone@format src/lib.rs after '^    pub fn format<I: Integer>' '        let _: u8 = None.unwrap();'
	bug unwrapnone@udivmod src/udiv128.rs after '^pub fn udivmod_1e19' '    let _: u8 = None.unwrap();'
	bug typeerr@maxlen src/lib.rs sub 'const U8_MAX_LEN: usize = 3;' 'const U8_MAX_LEN: usize = "3";'
}

proj_js_contenttype() {
	desc="fast-content-type-parse 4.0.1 from the npm registry (tests shipped in the package); node 20's own test runner, node --test, its TAP and spec reporters."
	npm_src fast-content-type-parse@4.0.1
	cmd='node --test'
	local spec='node --test --test-reporter=spec'
	bug flipcmp@slash index.js sub 'if \(index === typeStart \|\| index === len \|\| code !== SLASH\) \{' 'if (index === typeStart || index === len || code === SLASH) {'
	bug offbyone@unescape index.js sub 'value \+= header\.slice\(start, index\)' 'value += header.slice(start, index + 1)' "$spec"
	bug wrongmsg@parse index.js sub "throw new TypeError\('invalid media type'\)" "throw new TypeError('invalid content type')" "$spec"
	bug typeerr@ows index.js sub '    code = header\.charCodeAt\(index\)\n    if \(code !== SP && code !== HTAB\) break\n' $'    code = header.charCodeAT(index)\n    if (code !== SP && code !== HTAB) break\n'
	bug typeerr@unescape index.js sub 'if \(header\.charCodeAt\(index\) === BSLASH\)' 'if (header.charCodeAT(index) === BSLASH)'
	bug syntax@parse index.js sub '^function parse \(header\) \{' 'function parse (header {'
}

# blind3: two Java projects and six in the other languages, none of them
# in another set, captured after the rules were changed again.

proj_java_codec() {
	desc="commons-codec 1.15 from Debian's libcommons-codec-java source package; Maven 3.8 offline against Debian's /usr/share/maven-repo with surefire 2.22 and JUnit 4 (its pom replaced by a minimal one naming Debian's versions of junit, commons-lang3 and the compiler, resources and surefire plugins, as the upstream one inherits commons-parent's release plugins); the phonetic, Hex, StringUtils and URLCodec test classes."
	java_deb_src libcommons-codec-java
	cat >"$java_dir/pom.xml" <<-'POM'
	<?xml version="1.0" encoding="UTF-8"?>
	<project xmlns="http://maven.apache.org/POM/4.0.0">
	  <modelVersion>4.0.0</modelVersion>
	  <groupId>commons-codec</groupId>
	  <artifactId>commons-codec</artifactId>
	  <version>1.15</version>
	  <properties>
	    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
	    <maven.compiler.source>8</maven.compiler.source>
	    <maven.compiler.target>8</maven.compiler.target>
	  </properties>
	  <dependencies>
	    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
	    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-lang3</artifactId><version>3.12.0</version><scope>test</scope></dependency>
	  </dependencies>
	  <build>
	    <plugins>
	      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
	      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
	      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
	    </plugins>
	  </build>
	</project>
	POM
	local mvn="mvn -o -B -Dmaven.repo.local=/usr/share/maven-repo -Dtest='Soundex*Test,*Metaphone*Test,Caverphone*Test,NysiisTest,ColognePhoneticTest,HexTest,StringUtilsTest,URLCodecTest'"
	cmd="$mvn test"
	local lang=src/main/java/org/apache/commons/codec/language bin=src/main/java/org/apache/commons/codec/binary
	bug flipcmp@soundex $lang/Soundex.java sub "if \(digit != '0' && digit != lastDigit\) \{" "if (digit != '0' && digit == lastDigit) {"
	bug offbyone@decodehex $bin/Hex.java sub 'final int outLen = len >> 1;' 'final int outLen = (len >> 1) + 1;'
	bug nullref@soundex $lang/Soundex.java after '^    public String soundex\(String str\) \{' '        final String missing = null; missing.length();'
	bug nullref@metaphone $lang/Metaphone.java after '^    public String metaphone\(final String txt\) \{' '        final String missing = null; missing.length();'
	bug wrongconst@mapping $lang/Soundex.java sub 'US_ENGLISH_MAPPING_STRING = "01230120022455012623010202";' 'US_ENGLISH_MAPPING_STRING = "01230120022455012623010203";' "$mvn -DtrimStackTrace=false test"
	bug nosymbol@todigit $bin/Hex.java sub 'int f = toDigit\(data\[j\], j\) << 4;' 'int f = toDigits(data[j], j) << 4;'
}

proj_java_csv() {
	desc="commons-csv 1.9.0 from Debian's commons-csv source package; compiled with javac 17 and run with Debian's JUnit 5 console launcher (junit5), with commons-io, commons-lang3 and hamcrest from Debian; the test classes that need no database or mocks (CSVFormat, CSVFormatPredefined, CSVParser, CSVRecord, Lexer, ExtendedBufferedReader)."
	java_deb_src commons-csv
	local cp=/usr/share/java/junit-platform-console-standalone.jar:/usr/share/java/commons-io.jar:/usr/share/java/commons-lang3.jar:/usr/share/java/hamcrest.jar
	local build="rm -rf build && javac -nowarn -d build/main \$(find src/main/java -name '*.java') && javac -nowarn -d build/test -cp build/main:$cp src/test/java/org/apache/commons/csv/{Utils,TokenMatchers,CSVFormatTest,CSVFormatPredefinedTest,CSVParserTest,CSVRecordTest,LexerTest,ExtendedBufferedReaderTest}.java"
	local launch="java -cp build/main:build/test:src/test/resources:$cp org.junit.platform.console.ConsoleLauncher --disable-banner --scan-classpath build/test"
	cmd="$build && $launch"
	local main=src/main/java/org/apache/commons/csv
	bug flipcmp@isescape $main/Lexer.java sub 'boolean isEscape\(final int ch\) \{\n        return ch == escape;' $'boolean isEscape(final int ch) {\n        return ch != escape;' "$build && $launch --details=flat --disable-ansi-colors"
	bug offbyone@size $main/CSVRecord.java sub '(    public int size\(\) \{\n)        return values\.length;' $'    public int size() {\n        return values.length - 1;'
	bug nullref@getname $main/CSVRecord.java after '^    public String get\(final String name\) \{' '        final String missing = null; missing.length();'
	bug nosymbol@escapedelim $main/Lexer.java sub 'token\.content\.append\(delimiter\);' 'token.content.append(delimiters);'
	bug nosymbol@getindex $main/CSVRecord.java sub 'return values\[i\];' 'return value[i];'
	bug removedline@eol $main/Lexer.java sub '(            // note: does not change ch outside of this method!\n)            ch = reader\.read\(\);\n' $'            // note: does not change ch outside of this method!\n'
}

proj_go_ulid() {
	desc="github.com/oklog/ulid/v2 v2.1.0 from the Go module proxy; go test, -race, -v (parallel subtests), -json."
	go_src github.com/oklog/ulid/v2@v2.1.0
	cmd='go test ./...'
	bug race@lockedread ulid.go sub '\tr\.mu\.Lock\(\)\n\terr = r\.MonotonicReader\.MonotonicRead\(ms, p\)\n\tr\.mu\.Unlock\(\)\n' $'\terr = r.MonotonicReader.MonotonicRead(ms, p)\n' 'go test -race ./...'
	bug flipcmp@overflow ulid.go sub "if v\[0\] > '7' \{" "if v[0] < '7' {" 'go test -v ./...'
	bug offbyone@entropy ulid.go sub '\tcopy\(e, id\[6:\]\)\n' $'\tcopy(e, id[5:])\n' 'go test -json ./...'
	bug nilderef@parse ulid.go after '^func parse\(v \[\]byte, strict bool, id \*ULID\) error' $'\tid = nil' 'go test -v ./...'
	bug nilderef@settime ulid.go after '^func \(id \*ULID\) SetTime\(' $'\tid = nil' 'go test -v ./...'
	bug wrongconst@encoding ulid.go sub 'const Encoding = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"' 'const Encoding = "0123456789ABCDEFGHJKMNPQRSTVWXZY"'
}

proj_go_gobreaker() {
	desc="github.com/sony/gobreaker v1.0.0 from the Go module proxy (testify from the proxy too); go test, -race, -v, -json."
	go_src github.com/sony/gobreaker@v1.0.0
	cmd='go test ./...'
	bug race@afterrequest gobreaker.go sub '\) afterRequest\(before uint64, success bool\) \{\n\tcb\.mutex\.Lock\(\)\n\tdefer cb\.mutex\.Unlock\(\)\n' $') afterRequest(before uint64, success bool) {\n' 'go test -race ./...'
	bug flipcmp@halfopen gobreaker.go sub 'state == StateHalfOpen && cb\.counts\.Requests >= cb\.maxRequests' 'state == StateHalfOpen && cb.counts.Requests < cb.maxRequests'
	bug offbyone@readytotrip gobreaker.go sub 'return counts\.ConsecutiveFailures > 5' 'return counts.ConsecutiveFailures > 6' 'go test -v ./...'
	bug wrongconst@timeout gobreaker.go sub 'const defaultTimeout = time\.Duration\(60\) \* time\.Second' 'const defaultTimeout = time.Duration(30) * time.Second' 'go test -json ./...'
	bug removedline@onsuccess gobreaker.go sub '\tc\.ConsecutiveSuccesses\+\+\n\tc\.ConsecutiveFailures = 0\n' $'\tc.ConsecutiveSuccesses++\n'
	bug removedline@onfailure gobreaker.go sub '\tc\.ConsecutiveFailures\+\+\n\tc\.ConsecutiveSuccesses = 0\n' $'\tc.ConsecutiveFailures++\n'
}

proj_rust_fnv() {
	desc="fnv 1.0.7 from Debian's librust-fnv-dev; cargo test (with doctests), offline."
	rust_src fnv-1.0.7
	cmd='cargo test'
	bug wrongconst@prime lib.rs sub 'hash = hash\.wrapping_mul\(0x100000001b3\);' 'hash = hash.wrapping_mul(0x100000001b2);'
	bug offbyone@write lib.rs sub 'for byte in bytes\.iter\(\) \{' 'for byte in bytes.iter().skip(1) {'
	bug unwrapnone@default lib.rs after '^    fn default\(\) -> FnvHasher \{' '        let _: u8 = None.unwrap();'
	bug unwrapnone@write lib.rs after '^    fn write\(&mut self, bytes: &\[u8\]\) \{' '        let _: u8 = None.unwrap();'
	bug typeerr@finish lib.rs sub '    fn finish\(&self\) -> u64 \{\n        self\.0\n' $'    fn finish(&self) -> u64 {\n        self.0 as u32\n'
	bug removedline@write lib.rs sub '\n        \*self = FnvHasher\(hash\);\n' $'\n'
}

proj_py_iso8601() {
	desc="iso8601 1.0.2 from Debian's python3-iso8601 (its test module shipped in the package, with hypothesis); pytest -v, pytest."
	py_src iso8601
	cmd='/usr/bin/python3 -m pytest -v iso8601'
	bug flipcmp@sign iso8601/iso8601.py sub '    if sign == "-":\n' $'    if sign != "-":\n'
	bug wrongconst@microsecond iso8601/iso8601.py sub '\* Decimal\("1000000\.0"\)' '* Decimal("100000.0")' '/usr/bin/python3 -m pytest iso8601'
	bug wrongmsg@parsedate iso8601/iso8601.py sub 'raise ParseError\(f"Unable to parse date string' 'raise ParseError(f"Could not parse date string'
	bug removedline@minutes iso8601/iso8601.py sub '\n        minutes = -minutes\n' $'\n'
	bug attrerr@parsedate iso8601/iso8601.py sub '    try:\n        m = ISO8601_REGEX\.match\(datestring\)\n' $'    None.missing_attribute\n    try:\n        m = ISO8601_REGEX.match(datestring)\n'
	bug attrerr@fixedoffset iso8601/iso8601.py sub '\) -> datetime\.timezone:\n    return datetime\.timezone\(' $') -> datetime.timezone:\n    None.missing_attribute\n    return datetime.timezone('
}

proj_py_mpmath() {
	desc="mpmath 1.2.1 from Debian's python3-mpmath (tests shipped in the package; the arithmetic, conversion and printing test files, not the slow special-function ones); pytest."
	py_src mpmath
	local t=mpmath/tests/test_
	cmd="/usr/bin/python3 -m pytest ${t}basic_ops.py ${t}convert.py ${t}division.py ${t}power.py ${t}str.py ${t}bitwise.py ${t}trig.py"
	bug flipcmp@lt mpmath/libmp/libmpf.py sub '    return mpf_cmp\(s, t\) < 0\n' $'    return mpf_cmp(s, t) > 0\n'
	bug offbyone@highbit mpmath/libmp/libmpf.py sub '    a = sbc \+ sexp\n' $'    a = sbc + sexp + 1\n'
	bug wrongconst@dpstoprec mpmath/libmp/libmpf.py sub 'return max\(1, int\(round\(\(int\(n\)\+1\)\*3\.3219280948873626\)\)\)' 'return max(1, int(round((int(n)+1)*3.0)))'
	bug removedline@subsign mpmath/libmp/libmpf.py sub '\n    tsign \^= _sub\n' $'\n'
	bug attrerr@neg mpmath/libmp/libmpf.py sub '    operation exactly\."""\n' $'    operation exactly."""\n    None.missing_attribute\n'
	bug attrerr@abs mpmath/libmp/libmpf.py sub '    exact result\."""\n' $'    exact result."""\n    None.missing_attribute\n'
}

proj_js_complex() {
	desc="complex.js 2.1.1 from the npm registry (tests shipped in the package); its mocha tests under vitest 3."
	npm_src complex.js@2.1.1 vitest@3
	# Its tests are mocha's (describe, it, node's assert): vitest runs them
	# with its globals on.
	printf '%s\n' "export default { test: { include: ['tests/*.test.js'], globals: true } };" >"$npm_dir/vitest.config.mjs"
	cmd='npx vitest run'
	bug flipcmp@tostring complex.js sub '        if \(b < 0\) \{\n          b = -b;\n          ret \+= "-";' $'        if (b > 0) {\n          b = -b;\n          ret += "-";'
	bug offbyone@powquadrant complex.js sub "switch \(\(z\['re'\] % 4 \+ 4\) % 4\)" "switch (((z['re'] + 1) % 4 + 4) % 4)"
	bug wrongconst@i complex.js sub "Complex\['I'\] = new Complex\(0, 1\);" "Complex['I'] = new Complex(0, -1);"
	bug typeerr@add complex.js after "^    'add': function\(a, b\) \{" '      var missing = null; missing.re = a;'
	bug typeerr@sub complex.js after "^    'sub': function\(a, b\) \{" '      var missing = null; missing.re = a;'
	bug syntax@mul complex.js sub "'mul': function\(a, b\) \{" "'mul': function(a, b {"
}

# blind4: eight more projects and bugs, none of them in another set,
# captured after the rules were changed again and never used to tune them.

proj_go_semver() {
	desc="github.com/Masterminds/semver/v3 v3.2.1 from the Go module proxy; go test, -v, -json."
	go_src github.com/Masterminds/semver/v3@v3.2.1
	cmd='go test ./...'
	bug flipcmp@comparesegment version.go sub '\tif v < o \{\n\t\treturn -1\n' $'\tif v > o {\n\t\treturn -1\n'
	bug offbyone@incpatch version.go sub 'vNext\.patch = v\.patch \+ 1' 'vNext.patch = v.patch + 2' 'go test -v ./...'
	bug nilderef@compare version.go after '^func \(v \*Version\) Compare\(o \*Version\) int \{' $'\to = nil' 'go test -json ./...'
	bug nilderef@caret constraints.go after '^func constraintCaret\(v \*Version, c \*constraint\) \(bool, error\) \{' $'\tc = nil'
	bug wrongmsg@gte constraints.go sub '"%s is less than %s", v, c\.orig\)\n\}\n\nfunc constraintLessThanEqual' $'"%s is lower than %s", v, c.orig)\n}\n\nfunc constraintLessThanEqual' 'go test -v ./...'
	bug syntax@string version.go sub 'fmt\.Fprintf\(&buf, "%d\.%d\.%d", v\.major, v\.minor, v\.patch\)' 'fmt.Fprintf(&buf, "%d.%d.%d", v.major, v.minor, v.patch'
}

proj_go_clock() {
	desc="github.com/benbjohnson/clock v1.3.5 from the Go module proxy; go test, -race, -v, -json."
	go_src github.com/benbjohnson/clock@v1.3.5
	cmd='go test ./...'
	bug race@afterfunc clock.go sub '(\) AfterFunc\(d time\.Duration, f func\(\)\) \*Timer \{\n)\tm\.mu\.Lock\(\)\n\tdefer m\.mu\.Unlock\(\)\n' $') AfterFunc(d time.Duration, f func()) *Timer {\n' 'go test -race ./...'
	bug removedline@addnow clock.go sub '\tm\.now = t\n\tm\.mu\.Unlock\(\)\n' $'\tm.mu.Unlock()\n' 'go test -v ./...'
	bug nilderef@timer clock.go after '^func \(m \*Mock\) Timer\(d time\.Duration\) \*Timer \{' $'\tm = nil' 'go test -json ./...'
	bug nilderef@ticker clock.go after '^func \(m \*Mock\) Ticker\(d time\.Duration\) \*Ticker \{' $'\tm = nil'
	bug wrongconst@epoch clock.go sub 'return &Mock\{now: time\.Unix\(0, 0\)\}' 'return &Mock{now: time.Unix(1, 0)}'
}

proj_py_networkx() {
	desc="networkx 2.8.8 from Debian's python3-networkx (tests shipped in the package; the shortest-path, traversal and components tests); pytest, -v."
	py_src networkx
	local t=networkx/algorithms
	cmd="/usr/bin/python3 -m pytest $t/shortest_paths/tests $t/traversal/tests $t/components/tests"
	local sp=$t/shortest_paths
	bug flipcmp@dijkstrafringe $sp/weighted.py sub 'elif u not in seen or vu_dist < seen\[u\]:' 'elif u not in seen or vu_dist > seen[u]:'
	bug offbyone@depthlimit $t/traversal/breadth_first_search.py sub '                if depth_now > 1:' '                if depth_now > 2:' "/usr/bin/python3 -m pytest -v $t/shortest_paths/tests $t/traversal/tests $t/components/tests"
	bug removedline@dijkstradist $sp/weighted.py sub '            continue  # already searched this node\.\n        dist\[v\] = d\n' $'            continue  # already searched this node.\n'
	bug attrerr@dijkstralength $sp/weighted.py sub '    if source not in G:\n        raise nx\.NodeNotFound\(f"Node \{source\} not found in graph"\)\n    if source == target:\n        return 0\n' $'    None.missing_attribute\n    if source not in G:\n        raise nx.NodeNotFound(f"Node {source} not found in graph")\n    if source == target:\n        return 0\n'
	bug attrerr@bidirectional $sp/unweighted.py sub '    # call helper to do the real work\n' $'    None.missing_attribute\n    # call helper to do the real work\n'
	bug syntax@bfs $t/traversal/breadth_first_search.py sub '    visited = \{source\}\n    if depth_limit is None:' $'    visited = {source\n    if depth_limit is None:'
}

proj_py_pyflakes() {
	desc="pyflakes 2.5.0 from Debian's python3-pyflakes (tests shipped in the package, with the bin/pyflakes script of its source tree, which its integration tests run); unittest."
	py_src pyflakes
	eval "pyflakes_pkg_src() $(declare -f src | tail -n +2)"
	src() {
		pyflakes_pkg_src "$1"
		mkdir -p "$1/bin"
		printf '#!/usr/bin/env python\nfrom pyflakes.scripts.pyflakes import main\nmain()\n' >"$1/bin/pyflakes"
	}
	cmd='/usr/bin/python3 -m unittest discover -s pyflakes/test -t .'
	bug flipcmp@iftuple pyflakes/checker.py sub 'node\.test\.elts != \[\]:\n            self\.report\(messages\.IfTuple' $'node.test.elts == []:\n            self.report(messages.IfTuple'
	bug wrongmsg@unusedimport pyflakes/messages.py sub "message = '%r imported but unused'" "message = '%r imported and never used'"
	bug attrerr@compare pyflakes/checker.py after '^    def COMPARE\(self, node\):' '        None.missing_attribute'
	bug attrerr@joinedstr pyflakes/checker.py after '^    def JOINEDSTR\(self, node\):' '        None.missing_attribute'
	bug removedline@ifchildren pyflakes/checker.py sub '            self\.report\(messages\.IfTuple, node\)\n        self\.handleChildren\(node\)\n' $'            self.report(messages.IfTuple, node)\n'
}

proj_rust_shlex() {
	desc="shlex 1.1.0 from Debian's librust-shlex-dev; cargo test, offline."
	rust_src shlex-1.1.0
	cmd='cargo test'
	bug flipcmp@nextchar src/lib.rs sub "if res == Some\('\\\\n' as u8\) \{ self\.line_no \+= 1; \}" "if res != Some('\\n' as u8) { self.line_no += 1; }"
	bug offbyone@lineno src/lib.rs sub '            line_no: 1,' '            line_no: 0,'
	bug wrongconst@quotechar src/lib.rs sub "        out\.push\('\"' as u8\);\n        for c in" $'        out.push(\'\\\'\' as u8);\n        for c in' 'cargo test -q'
	bug unwrapnone@split src/lib.rs after '^pub fn split\(in_str: &str\) -> Option<Vec<String>> \{' '    let _ = in_str.bytes().nth(in_str.len()).unwrap();'
	bug unwrapnone@quote src/lib.rs after '^pub fn quote\(in_str: &str\) -> Cow<str> \{' '    let _ = in_str.bytes().nth(in_str.len()).unwrap();'
	bug typeerr@join src/lib.rs sub '\.join\(" "\)' ".join(' ')"
	bug removedline@escape src/lib.rs sub "                '\\$' \| '\`' \| '\"' \| '\\\\\\\\' => out\.push\('\\\\\\\\' as u8\),\n" ''
}

proj_js_quaternion() {
	desc="quaternion 1.5.1 from the npm registry (tests shipped in the package); its mocha tests (describe, it, node's assert) under jest 29."
	npm_src quaternion@1.5.1 jest@29
	cmd='npx jest --ci'
	bug flipcmp@equals quaternion.js sub "      return Math\.abs\(P\['w'\] - this\['w'\]\) < eps" "      return Math.abs(P['w'] - this['w']) > eps"
	bug wrongconst@rotatevector quaternion.js sub 'var tx = 2 \* \(qy \* vz - qz \* vy\);' 'var tx = 3 * (qy * vz - qz * vy);'
	bug nullref@add quaternion.js sub "(    'add': function\(w, x, y, z\) \{\n\n)      parse\(P, w, x, y, z\);" $'    \'add\': function(w, x, y, z) {\n\n      parse(null, w, x, y, z);'
	bug nullref@mul quaternion.js sub "(    'mul': function\(w, x, y, z\) \{\n\n)      parse\(P, w, x, y, z\);" $'    \'mul\': function(w, x, y, z) {\n\n      parse(null, w, x, y, z);' 'npx jest --ci --verbose'
	bug removedline@tostringk quaternion.js sub "      ret \+= numToStr\(z, 'k', ret\);\n" ''
	bug syntax@tostring quaternion.js sub "      if \('' === ret\)\n" $'      if (\'\' === ret\n'
}

proj_js_fastifyerror() {
	desc="@fastify/error 4.2.0 from the npm registry (tests shipped in the package); node 20's own test runner, node --test, its TAP and spec reporters."
	npm_src @fastify/error@4.2.0
	cmd='node --test'
	local spec='node --test --test-reporter=spec'
	bug flipcmp@generic index.js sub 'const shouldCreateFastifyGenericError = code === FastifyGenericErrorSymbol' 'const shouldCreateFastifyGenericError = code !== FastifyGenericErrorSymbol'
	bug offbyone@lastelement index.js sub 'const lastElement = args\.length - 1' 'const lastElement = args.length - 2' "$spec"
	bug wrongmsg@emptycode index.js sub "throw new Error\('Fastify error code must not be empty'\)" "throw new Error('Fastify error code must be set')"
	bug wrongconst@statuscode index.js sub 'function createError \(code, message, statusCode = 500,' 'function createError (code, message, statusCode = 400,'
	bug removedline@tostring index.js sub '  FastifyError\.prototype\.toString = toString\n' '' "$spec"
	bug removedline@name index.js sub "    this\.name = 'FastifyError'\n" ''
}

proj_java_jsonsimple() {
	desc="json-simple 2.3.0 from Debian's json-simple source package; compiled with javac 17 and run with JUnit 4's JUnitCore runner (junit4, with hamcrest-core from Debian), every test class."
	java_deb_src json-simple
	local cp=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
	local build="rm -rf build && javac -nowarn -d build/main \$(find src/main/java -name '*.java') && javac -nowarn -d build/test -cp build/main:$cp \$(find src/test/java -name '*.java')"
	local t=org.json.simple
	cmd="$build && java -cp build/main:build/test:$cp org.junit.runner.JUnitCore $t.JSONArrayTest $t.JSONValueTest $t.JsonArrayTest $t.JsonObjectTest $t.JsonerTest $t.YylexTest $t.parser.JSONParserTest $t.parser.YylexTest"
	local main=src/main/java/org/json/simple
	bug flipcmp@requirekeys $main/JsonObject.java sub '\t\t\tif\(!this\.containsKey\(k\.getKey\(\)\)\)\{' $'\t\t\tif(this.containsKey(k.getKey())){'
	bug offbyone@prettyclose $main/Jsoner.java sub '\t\t\t\t\t\tlevel--;\n\t\t\t\t\t\tfor\(int i = 0; i < level; i\+\+\)\{' $'\t\t\t\t\t\tlevel--;\n\t\t\t\t\t\tfor(int i = 0; i <= level; i++){'
	bug nullref@escape $main/Jsoner.java sub '(public static String escape\(final String escapable\)\{\n)\t\tfinal StringBuilder builder = new StringBuilder\(\);' $'public static String escape(final String escapable){\n\t\tfinal StringBuilder builder = null;'
	bug nullref@prettyprint $main/Jsoner.java sub '\t\tfinal StringBuilder returnable = new StringBuilder\(\);\n\t\tint level = 0;' $'\t\tfinal StringBuilder returnable = null;\n\t\tint level = 0;'
	bug nosymbol@prettyescape $main/Jsoner.java sub 'returnable\.append\(Jsoner\.escape\(\(String\)lexed\.getValue\(\)\)\);' 'returnable.append(Jsoner.escapes((String)lexed.getValue()));'
	bug removedline@prettyopen $main/Jsoner.java sub '\t\t\t\t\t\treturnable\.append\("\\n"\);\n\t\t\t\t\t\tlevel\+\+;\n' $'\t\t\t\t\t\treturnable.append("\\n");\n'
}

# The sets of the corpus and their projects, in the order they are captured.
sets=(
	'train: go_uuid go_sync go_humanize py_simplejson rust_semver js_papaparse ts_typefest'
	'holdout: go_cmp go_pflag py_toolz py_jsonschema rust_strsim js_minimist js_url'
	'blind: go_lru go_xxhash py_bs4 rust_heck js_pathbrowserify'
	'blind2: go_time go_btree py_colorama py_isodate rust_itoa js_contenttype'
	'blind3: java_codec java_csv go_ulid go_gobreaker py_iso8601 py_mpmath rust_fnv js_complex'
	'blind4: go_semver go_clock py_networkx py_pyflakes rust_shlex js_quaternion js_fastifyerror java_jsonsimple'
)
all_projects=()
declare -A set_of
for entry in "${sets[@]}"; do
	for member in ${entry#*:}; do
		all_projects+=("$member")
		set_of[$member]=${entry%%:*}
	done
done

main() {
	[ $# -gt 0 ] || set -- "${all_projects[@]}"
	for proj in "$@"; do
		declare -F "proj_$proj" >/dev/null || die "unknown project $proj (known: ${all_projects[*]})"
		bugname=
		forget_bugs
		"proj_$proj"
		capture "${set_of[$proj]}" "${proj%%_*}" "${proj#*_}"
	done
}

# One line, so that bash, which reads a script as it runs it, never reads
# past it.
main "$@"; exit
