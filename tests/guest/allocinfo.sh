# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Guest tests of the allocinfo tool (crates/allocinfo) against the live
# /proc/allocinfo. POSIX sh for busybox ash, run as root. The guest runner
# sources this file and runs each test_* function in a subshell under set -e:
# return 0 is a pass, anything else a failure, with the reason printed on
# stdout. ALLOCINFO overrides the binary (default /bin/allocinfo).

ALLOCINFO=${ALLOCINFO:-/bin/allocinfo}

_ai_fail() {
	echo "FAIL: $*"
	return 1
}

_ai_tmpdir() {
	mktemp -d "${TMPDIR:-/tmp}/allocinfo.XXXXXX"
}

# Distinct call sites (file:line [module] func:name) in a profile; allocinfo
# merges identical ones (inline functions in headers) into one row.
_ai_sites() {
	awk 'NR > 2 { k = $3; for (i = 4; i <= NF; i++) k = k " " $i; print k }' "$1" | sort -u | wc -l
}

_ai_precheck() {
	[ -x "$ALLOCINFO" ] || { _ai_fail "$ALLOCINFO missing"; return 1; }
	[ -r /proc/allocinfo ] || { _ai_fail "/proc/allocinfo not readable"; return 1; }
}

test_allocinfo_version() {
	_ai_precheck || return 1
	out=$("$ALLOCINFO" --version) || { _ai_fail "--version exited $?"; return 1; }
	case $out in
	"allocinfo "[0-9]*) ;;
	*) _ai_fail "unexpected --version output: $out"; return 1 ;;
	esac
}

test_allocinfo_top_prints_n_rows() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	"$ALLOCINFO" top -n 5 > "$d/out" || { _ai_fail "top -n 5 exited $?"; return 1; }
	grep -q '^/proc/allocinfo (format 1\.0): .* calls at [0-9]* call sites$' "$d/out" ||
		{ _ai_fail "no summary line"; cat "$d/out"; return 1; }
	sed -n 2p "$d/out" | grep -q '^ *BYTES  *CALLS  *SHARE  CALL SITE$' ||
		{ _ai_fail "no column header"; cat "$d/out"; return 1; }
	rows=$(awk 'NR > 2 && !/^\(/' "$d/out" | wc -l)
	[ "$rows" -eq 5 ] || { _ai_fail "expected 5 rows, got $rows"; cat "$d/out"; return 1; }
	grep -q '^(5 of [0-9]* rows; -n 0 shows all)$' "$d/out" || { _ai_fail "no footer"; return 1; }
	rm -rf "$d"
}

test_allocinfo_top_sorted_by_bytes() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	"$ALLOCINFO" top -n 0 --exact > "$d/out" || { _ai_fail "top exited $?"; return 1; }
	awk 'NR > 2 && !/^\(/ { print $1 }' "$d/out" > "$d/bytes"
	[ -s "$d/bytes" ] || { _ai_fail "no rows"; return 1; }
	awk 'NR > 1 && $1 + 0 > prev + 0 { print "not sorted at row " NR ": " $1 " after " prev; bad = 1 }
	     { prev = $1 } END { exit bad }' "$d/bytes" || { _ai_fail "rows not sorted by bytes"; return 1; }
	rm -rf "$d"
}

test_allocinfo_json_structure() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	"$ALLOCINFO" top -n 3 --json > "$d/out" || { _ai_fail "--json exited $?"; return 1; }
	[ "$(wc -l < "$d/out")" -eq 1 ] || { _ai_fail "JSON is not one line"; return 1; }
	grep -q '^{"schema":"allocinfo-report/1","command":"top","group_by":"site","sort":"bytes","source":{"path":"/proc/allocinfo","version":"1.0","total":{"bytes":-\{0,1\}[0-9]*,"calls":[0-9]*,"sites":[0-9]*}},"old_source":null,"matched_rows":[0-9]*,"rows":\[{.*}\]}$' "$d/out" ||
		{ _ai_fail "JSON document shape"; head -c 400 "$d/out"; return 1; }
	keys=$(tr ',' '\n' < "$d/out" | grep -c '"key":"' || true)
	[ "$keys" -eq 3 ] || { _ai_fail "expected 3 rows in JSON, got $keys"; return 1; }
	rm -rf "$d"
}

test_allocinfo_csv_one_line_per_site() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	cat /proc/allocinfo > "$d/profile"
	"$ALLOCINFO" top -n 0 --csv -f "$d/profile" > "$d/out" || { _ai_fail "--csv exited $?"; return 1; }
	[ "$(head -n 1 "$d/out")" = "group,key,module,dir,file,line,function,sites,bytes,calls,share,accurate,unloaded" ] ||
		{ _ai_fail "CSV header: $(head -n 1 "$d/out")"; return 1; }
	lines=$(wc -l < "$d/out")
	sites=$(_ai_sites "$d/profile")
	tags=$(($(wc -l < "$d/profile") - 2))
	[ "$tags" -gt 100 ] || { _ai_fail "only $tags tags in /proc/allocinfo"; return 1; }
	[ "$lines" -eq $((sites + 1)) ] || { _ai_fail "CSV has $lines lines for $sites call sites"; return 1; }
	# Merged rows count their tags: the sites column adds up to the tags.
	summed=$(awk -F, 'NR > 1 { n += $8 } END { print n }' "$d/out")
	[ "$summed" -eq "$tags" ] || { _ai_fail "sites column sums to $summed, profile has $tags tags"; return 1; }
	# Totals agree with the file, to the byte.
	want=$(awk 'NR > 2 { s += $1 } END { printf "%.0f", s }' "$d/profile")
	got=$(awk -F, 'NR > 1 { s += $9 } END { printf "%.0f", s }' "$d/out")
	[ "$want" = "$got" ] || { _ai_fail "bytes add up to $got, expected $want"; return 1; }
	rm -rf "$d"
}

test_allocinfo_prometheus() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	cat /proc/allocinfo > "$d/profile"
	"$ALLOCINFO" top -n 0 --prometheus -f "$d/profile" > "$d/out" || { _ai_fail "--prometheus exited $?"; return 1; }
	for m in allocinfo_bytes allocinfo_calls allocinfo_total_bytes allocinfo_total_calls allocinfo_sites; do
		grep -q "^# HELP $m " "$d/out" || { _ai_fail "no HELP for $m"; return 1; }
		grep -q "^# TYPE $m gauge\$" "$d/out" || { _ai_fail "no TYPE for $m"; return 1; }
	done
	bad=$(grep -v '^# ' "$d/out" |
		grep -cv '^allocinfo_[a-z_]*\({file="[^"]*",line="[0-9]*",module="[^"]*",function="[^"]*"}\)\{0,1\} -\{0,1\}[0-9][0-9]*$' || true)
	[ "$bad" -eq 0 ] || { _ai_fail "$bad malformed sample lines"; return 1; }
	samples=$(grep -c '^allocinfo_bytes{' "$d/out" || true)
	sites=$(_ai_sites "$d/profile")
	[ "$samples" -eq "$sites" ] || { _ai_fail "$samples allocinfo_bytes samples for $sites call sites"; return 1; }
	dups=$(grep -v '^#' "$d/out" | sed 's/ [-0-9]*$//' | sort | uniq -d | wc -l)
	[ "$dups" -eq 0 ] || { _ai_fail "$dups duplicate series"; return 1; }
	rm -rf "$d"
}

test_allocinfo_group_and_filter() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	"$ALLOCINFO" top --by module -n 0 --csv > "$d/modules" || { _ai_fail "--by module exited $?"; return 1; }
	grep -q '^module,vmlinux,,' "$d/modules" || { _ai_fail "no vmlinux row by module"; cat "$d/modules"; return 1; }
	"$ALLOCINFO" top --module vmlinux --path 'mm/*' -n 0 --csv > "$d/mm" || { _ai_fail "filters exited $?"; return 1; }
	[ "$(wc -l < "$d/mm")" -gt 1 ] || { _ai_fail "no built-in mm/ call sites"; return 1; }
	awk -F, 'NR > 1 && ($3 != "" || $5 !~ /^mm\//) { print "unfiltered row: " $0; bad = 1 } END { exit bad }' "$d/mm" ||
		{ _ai_fail "filter let other rows through"; return 1; }
	"$ALLOCINFO" top --by dir -n 3 > "$d/dirs" || { _ai_fail "--by dir exited $?"; return 1; }
	sed -n 2p "$d/dirs" | grep -q 'SITES  SHARE  DIRECTORY$' || { _ai_fail "no DIRECTORY column"; return 1; }
	rm -rf "$d"
}

test_allocinfo_snapshot_and_diff() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	old=$("$ALLOCINFO" snapshot -o "$d") || { _ai_fail "snapshot exited $?"; return 1; }
	case $old in
	"$d"/allocinfo-[0-9]*T[0-9]*Z.txt) ;;
	*) _ai_fail "unexpected snapshot name $old"; return 1 ;;
	esac
	[ "$(head -n 1 "$old")" = "allocinfo - version: 1.0" ] || { _ai_fail "snapshot lost the header"; return 1; }
	# Allocate a little in between: page cache, dentries, inodes.
	i=0
	while [ $i -lt 50 ]; do
		echo "$i" > "$d/file.$i"
		i=$((i + 1))
	done
	ls -lR /proc/self > /dev/null 2>&1 || true
	new=$("$ALLOCINFO" snapshot -o "$d") || { _ai_fail "second snapshot exited $?"; return 1; }
	[ "$old" != "$new" ] || { _ai_fail "both snapshots named $old"; return 1; }
	"$ALLOCINFO" diff "$old" "$new" > "$d/diff" || { _ai_fail "diff exited $?"; return 1; }
	grep -q '^old: .*allocinfo-.*(format 1\.0): ' "$d/diff" || { _ai_fail "no old: line"; cat "$d/diff"; return 1; }
	grep -q '^change: .* calls; call sites: [0-9]* new, [0-9]* gone, [0-9]* changed$' "$d/diff" ||
		{ _ai_fail "no change: line"; cat "$d/diff"; return 1; }
	"$ALLOCINFO" diff --all --json "$old" "$new" > "$d/json" || { _ai_fail "diff --json exited $?"; return 1; }
	grep -q '^{"schema":"allocinfo-report/1","command":"diff",.*"old_source":{"path":"[^"]*allocinfo-' "$d/json" ||
		{ _ai_fail "diff JSON shape"; return 1; }
	grep -q '"status":"[a-z]*","old_bytes":' "$d/json" || { _ai_fail "no status in diff rows"; return 1; }
	rm -rf "$d"
}

test_allocinfo_watch_plain_two_frames() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	"$ALLOCINFO" watch --plain --count 2 --interval 0.2 -n 5 > "$d/out" 2> "$d/err" ||
		{ _ai_fail "watch exited $?: $(cat "$d/err")"; return 1; }
	frames=$(grep -c '^allocinfo watch: frame [12] at ' "$d/out" || true)
	[ "$frames" -eq 2 ] || { _ai_fail "expected 2 frames, got $frames"; cat "$d/out"; return 1; }
	# With the kernel's waste figures next to the profile, an ALLOCS/S column.
	rate=
	[ ! -r /proc/allocwaste ] || rate='ALLOCS/S +'
	headers=$(grep -Ec "^ *\+BYTES +\+CALLS +${rate}BYTES +CALLS +STATUS  CALL SITE\$" "$d/out" || true)
	[ "$headers" -eq 2 ] || { _ai_fail "expected 2 column headers${rate:+ with ALLOCS/S}, got $headers"; cat "$d/out"; return 1; }
	esc=$(printf '\033')
	if grep -q "$esc" "$d/out"; then
		_ai_fail "escape codes in --plain output"
		return 1
	fi
	rm -rf "$d"
}

test_allocinfo_treemap_svg() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	"$ALLOCINFO" treemap -o "$d/x.svg" || { _ai_fail "treemap exited $?"; return 1; }
	[ -s "$d/x.svg" ] || { _ai_fail "no SVG written"; return 1; }
	head -c 40 "$d/x.svg" | grep -q '^<svg xmlns="http://www.w3.org/2000/svg"' || { _ai_fail "not an SVG"; return 1; }
	[ "$(tail -n 1 "$d/x.svg")" = "</svg>" ] || { _ai_fail "SVG not closed"; return 1; }
	rects=$(grep -c '<rect .*<title>' "$d/x.svg" || true)
	[ "$rects" -gt 10 ] || { _ai_fail "only $rects boxes"; return 1; }
	rm -rf "$d"
}

test_allocinfo_malformed_input_fails() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	{
		head -n 3 /proc/allocinfo
		echo '        12ab        1 mm/slub.c:1 func:broken '
	} > "$d/bad"
	if "$ALLOCINFO" top -f "$d/bad" > "$d/out" 2> "$d/err"; then
		_ai_fail "malformed input accepted"
		return 1
	fi
	grep -q "^allocinfo: error: $d/bad: line 4: invalid size \"12ab\"" "$d/err" ||
		{ _ai_fail "error does not name the line: $(cat "$d/err")"; return 1; }
	[ ! -s "$d/out" ] || { _ai_fail "output despite the error"; return 1; }
	rm -rf "$d"
}

test_allocinfo_reads_stdin() {
	_ai_precheck || return 1
	out=$("$ALLOCINFO" top -f - -n 1 < /proc/allocinfo) || { _ai_fail "stdin exited $?"; return 1; }
	echo "$out" | grep -q '^<stdin> (format 1\.0): ' || { _ai_fail "stdin not read: $out"; return 1; }
}

# allocinfo query and top through the kernel's ioctl, as the README says they
# read /proc/allocinfo (the host tests have only fakes of it): "auto" takes
# the ioctl here, -v says so, and the output is what the text gives, with
# names cut to their last 63 characters as the ioctl returns them
# (allocinfo-check frozen: record for record, byte for byte where no name
# is cut); --via text gives the text's lines byte for byte.
# alloctag_errpath's tags hold still while it is loaded (only its init
# allocates there), so the outputs compare exactly.
test_allocinfo_query_and_top_through_the_ioctl() {
	_ai_precheck || return 1
	d=$(_ai_tmpdir)
	insmod /lib/modules/alloctag_errpath.ko || { _ai_fail "insmod alloctag_errpath failed"; return 1; }
	trap 'rmmod alloctag_errpath 2>/dev/null || true' EXIT
	grep ' \[alloctag_errpath\] ' /proc/allocinfo >"$d/text"
	n=$(wc -l <"$d/text")
	[ "$n" -ge 2 ] || { _ai_fail "$n alloctag_errpath tags in the text"; return 1; }
	"$ALLOCINFO" query -v --module alloctag_errpath >"$d/auto" 2>"$d/auto.err" ||
		{ _ai_fail "query exited $?: $(cat "$d/auto.err")"; return 1; }
	grep -qx "allocinfo: query: via ioctl on /proc/allocinfo: $n matching tags" "$d/auto.err" ||
		{ _ai_fail "query -v said: $(cat "$d/auto.err")"; return 1; }
	allocinfo-check frozen "$d/text" "$d/auto" || { _ai_fail "query by ioctl differs from the text"; return 1; }
	"$ALLOCINFO" query --via ioctl --module alloctag_errpath >"$d/ioctl" ||
		{ _ai_fail "query --via ioctl exited $?"; return 1; }
	cmp "$d/auto" "$d/ioctl" || { _ai_fail "query --via ioctl differs from auto"; return 1; }
	"$ALLOCINFO" query --via text --module alloctag_errpath >"$d/viatext" ||
		{ _ai_fail "query --via text exited $?"; return 1; }
	cmp "$d/text" "$d/viatext" || { _ai_fail "query --via text differs from the text"; return 1; }
	# A filter that matches nothing, through the ioctl: no line, exit 0.
	"$ALLOCINFO" query -v --via ioctl --module alloctag_no_such_module >"$d/none" 2>"$d/none.err" ||
		{ _ai_fail "an empty query exited $?"; return 1; }
	[ ! -s "$d/none" ] || { _ai_fail "an empty query printed: $(head -n 3 "$d/none")"; return 1; }
	grep -q "via ioctl on /proc/allocinfo: 0 matching tags" "$d/none.err" ||
		{ _ai_fail "empty query -v said: $(cat "$d/none.err")"; return 1; }
	# top: the same table through the ioctl as through the text.
	"$ALLOCINFO" top -v --via ioctl -n 0 --exact --module alloctag_errpath >"$d/top-ioctl" 2>"$d/top.err" ||
		{ _ai_fail "top --via ioctl exited $?: $(cat "$d/top.err")"; return 1; }
	grep -q '^allocinfo: top: via ioctl on /proc/allocinfo: ' "$d/top.err" ||
		{ _ai_fail "top -v said: $(cat "$d/top.err")"; return 1; }
	"$ALLOCINFO" top --via text -n 0 --exact --module alloctag_errpath >"$d/top-text" ||
		{ _ai_fail "top --via text exited $?"; return 1; }
	# The summary line counts every tag read, which differ (the ioctl's
	# walk and the text's read are two reads of a busy kernel): the rows.
	tail -n +2 "$d/top-text" >"$d/top-text.rows"
	tail -n +2 "$d/top-ioctl" >"$d/top-ioctl.rows"
	cmp "$d/top-text.rows" "$d/top-ioctl.rows" ||
		{ _ai_fail "top through the ioctl differs from the text"; diff "$d/top-text.rows" "$d/top-ioctl.rows"; return 1; }
	[ "$(grep -c '\[alloctag_errpath\]' "$d/top-ioctl")" = "$n" ] || { _ai_fail "top lists not the $n alloctag_errpath sites"; return 1; }
	rmmod alloctag_errpath
	rm -rf "$d"
}
