#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The demo's timeline in a real viewer: record what `make run` records,
# write it with `auxtrig script --format=chrome`, check the Trace Event JSON
# (jq), then load it into speedscope (installed from npm by `make deps`) in
# headless Chromium driven through chromedriver, and check from the page's
# DOM and from a screenshot that the windows are there: one thread, six
# openat slices with their return values, in three rounds 1 ms apart, drawn
# where the JSON puts them.
. "$(dirname "$0")/lib.sh"
need_root
speedscope=$build/viewer/node_modules/speedscope/dist/release/index.html
for t in chromium chromedriver jq; do
	command -v $t >/dev/null || fail "$t is missing: run 'make deps' (it installs chromium, chromium-driver and jq)"
done
[ -f "$speedscope" ] || fail "speedscope is missing at $speedscope: run 'make deps' (npm install speedscope)"

# --- the recording and its JSON
"$AUXTRIG" record -q -w syscall:openat -e sched:sched_switch,syscalls:sys_enter_read -o "$tmp/demo.data" -- \
	"$DEMO" -r 3 >"$tmp/demo.out" 2>&1 || fail "record failed: $(cat "$tmp/demo.out")"
pid=$(sed -n 's/^openat_demo: pid \([0-9]*\),.*/\1/p' "$tmp/demo.out")
[ -n "$pid" ] || fail "no pid in the demo's output: $(cat "$tmp/demo.out")"
"$AUXTRIG" script --format=chrome -i "$tmp/demo.data" >"$tmp/demo.json" 2>"$tmp/script.err" ||
	fail "script --format=chrome failed: $(cat "$tmp/script.err")"
jq -e . "$tmp/demo.json" >/dev/null || fail "not JSON: $(head -c 300 "$tmp/demo.json")"
q() { jq -r "$1" "$tmp/demo.json"; }
assert_eq "$(q '[.traceEvents[] | select(.ph == "X" and .cat == "window" and .name == "openat")] | length')" 6 \
	"openat window slices"
assert_eq "$(q '[.traceEvents[] | select(.ph == "X" and .args.ret == -2)] | length')" 3 "slices returning -ENOENT"
assert_eq "$(q "[.traceEvents[] | select(.ph == \"X\") | .tid] | unique | join(\",\")")" "$pid" "the slices' thread"
assert_eq "$(q '.traceEvents[] | select(.ph == "M" and .name == "thread_name") | .args.name')" "openat_demo $pid" \
	"thread name"
# the slices do not overlap, and the rounds are at least the demo's 1 ms sleep apart
q '[.traceEvents[] | select(.ph == "X")] | sort_by(.ts) | .[] | "\(.ts) \(.dur)"' >"$tmp/slices"
awk 'NR > 1 && $1 < prev_end { bad = 1 } NR > 1 && NR % 2 == 1 && $1 - prev_end < 1000 { bad = 1 }
	{ prev_end = $1 + $2 } END { exit bad }' "$tmp/slices" || fail "slices not 3 rounds 1 ms apart: $(cat "$tmp/slices")"

# --- the viewer
port=$((20000 + RANDOM % 20000))
chromedriver --port=$port >"$tmp/chromedriver.log" 2>&1 &
driver=$!
sid=
cleanup() {
	[ -n "$sid" ] && curl -s -m 30 -X DELETE "localhost:$port/session/$sid" >/dev/null
	kill "$driver" 2>/dev/null
	wait "$driver" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 50); do
	curl -s -m 10 "localhost:$port/status" 2>/dev/null | grep -q '"ready":true' && break
	sleep 0.2
done
# Every request is bounded (-m): a browser that stops answering under a loaded emulated CPU fails
# the test in minutes (tests/run.sh runs a failing test once more) instead of holding the guest
# until its timeout (a loaded lab run once saw this test not end in 20 minutes).
# And the whole browser part has a deadline: past it, requests return at once (empty), so the
# loops below end quickly and the test fails on what it did not see.
deadline=$((SECONDS + 900))
wd() { # wd METHOD PATH [JSON]: the WebDriver command's "value"
	[ "$SECONDS" -lt "$deadline" ] || { echo null; return 0; }
	curl -s -m 180 -X "$1" "localhost:$port/session/$sid/$2" -H 'Content-Type: application/json' -d "${3:-{\}}" | jq -c .value
}
js() { # js SCRIPT: its return value
	wd POST execute/sync "$(jq -n --arg s "$1" '{script: $s, args: []}')"
}
# root needs --no-sandbox; without the background-networking flags this closed network refuses its
# connections; small machines (the lab's guests) crash the tab without --disable-dev-shm-usage
caps=$(jq -n --arg dir "$tmp/chrome" '{capabilities: {alwaysMatch: {browserName: "chrome", "goog:chromeOptions": {
	binary: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
	"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--allow-file-access-from-files", "--disable-dev-shm-usage", "--window-size=1200,700",
	("--user-data-dir=" + $dir)]}}}}')
sid=$(curl -s -m 300 -X POST "localhost:$port/session" -H 'Content-Type: application/json' -d "$caps" | jq -r .value.sessionId)
[ -n "$sid" ] && [ "$sid" != null ] || fail "chromedriver gave no session: $(tail -5 "$tmp/chromedriver.log")"

# speedscope loads a local profile as a script (what its own command line does)
printf 'speedscope.loadFileFromBase64("demo.json", "%s")' "$(base64 -w0 "$tmp/demo.json")" >"$tmp/load.js"
wd POST url "$(jq -n --arg u "file://$speedscope#localProfilePath=$tmp/load.js" '{url: $u}')" >/dev/null
for _ in $(seq 50); do
	text=$(js 'return document.body.innerText')
	grep -q "openat_demo $pid" <<<"$text" && break
	sleep 0.2
done
# the DOM: the one thread, named by the JSON's metadata
grep -qF "openat_demo $pid (pid $pid), openat_demo $pid (tid $pid)" <<<"$text" ||
	fail "speedscope does not show the demo's thread: $text"

# the screenshot: the slices are drawn where the rounds are. speedscope draws on its canvas in
# animation frames after the DOM has the profile: the screenshot counts once two in a row agree.
shot=$(wd GET screenshot | jq -r .)
for _ in $(seq 20); do
	prev=$shot
	shot=$(wd GET screenshot | jq -r .)
	[ "$shot" = "$prev" ] && break
done
[ "$shot" = "$prev" ] || fail "speedscope's page never stopped changing (20 screenshots)"
base64 -d <<<"$shot" >"$tmp/timeline.png"
mkdir -p "$build/tests/logs" && cp "$tmp/timeline.png" "$build/tests/logs/timeline-speedscope.png" &&
	cp "$tmp/demo.json" "$build/tests/logs/timeline-speedscope.json"
# the DOM again: speedscope's table of frames (its Sandwich view) lists the slices with their values
js 'const b = [...document.querySelectorAll("div, span, button")].filter(e => e.children.length < 3 &&
	e.textContent.trim().endsWith("Sandwich")); b[b.length - 1].click(); return b.length' >/dev/null
for _ in $(seq 50); do
	text=$(js 'return document.body.innerText')
	grep -q 'openat {' <<<"$text" && break
	sleep 0.2
done
grep -q '^.*openat {.*"ret":-2}' <<<"$(jq -r . <<<"$text")" || fail "no openat frame returning -2 in the table: $text"
grep -q '^.*openat {.*"ret":[0-9][0-9]*}' <<<"$(jq -r . <<<"$text")" || fail "no successful openat frame in the table: $text"

png=$(base64 -w0 "$tmp/timeline.png")
wd POST url '{"url":"about:blank"}' >/dev/null
# colored (slice) pixels of the overview band, grouped into runs of columns: one run per round
runs=$(wd POST execute/async "$(jq -n --arg png "$png" '{args: [$png], script: "
	const done = arguments[arguments.length - 1], img = new Image();
	img.onload = () => {
		const c = document.createElement(\"canvas\"); c.width = img.width; c.height = img.height;
		const g = c.getContext(\"2d\"); g.drawImage(img, 0, 0);
		const d = g.getImageData(0, 40, img.width, 70).data, cols = [];
		for (let x = 0; x < img.width; x++) {
			let n = 0;
			for (let y = 0; y < 70; y++) {
				const i = (y * img.width + x) * 4, r = d[i], gr = d[i + 1], b = d[i + 2];
				if (Math.max(r, gr, b) - Math.min(r, gr, b) > 40) n++;
			}
			cols.push(n > 0);
		}
		const runs = []; let last = -100;
		cols.forEach((on, x) => { if (!on) return; if (x - last > 20) runs.push([x, x]); runs[runs.length - 1][1] = x; last = x; });
		done({width: img.width, runs: runs});
	};
	img.src = \"data:image/png;base64,\" + arguments[0];"}')")
# where the JSON puts the slices on the overview's 1200 pixels (first start to last end), grouped
# the same way: on a fast machine one run per round; in a slow guest a round's slices lie apart
want=$(jq -c '[.traceEvents[] | select(.ph == "X")] | sort_by(.ts) | .[0].ts as $t0 | (map(.ts + .dur) | max) as $t1 |
	reduce .[] as $e ({g: [], end: null};
		(($e.ts - $t0) / ($t1 - $t0) * 1200) as $x | (($e.ts + $e.dur - $t0) / ($t1 - $t0) * 1200) as $xe |
		if .end != null and $x - .end <= 20 then .g[-1][1] = ([.g[-1][1], $xe] | max) | .end = ([.end, $xe] | max)
		else .g += [[$x, $xe]] | .end = $xe end) | .g | map(map(floor))' "$tmp/demo.json")
[ "$(jq length <<<"$want")" -ge 3 ] || fail "the JSON's slices make fewer than 3 groups: $want"
assert_eq "$(jq .width <<<"$runs")" 1200 "width of the screenshot"
runs=$(jq -c .runs <<<"$runs")
# Which of those columns speedscope (1.25.0) colours. The slices are narrower than a pixel, and
# it draws them twice through a grid: into a row atlas of 4096 texels spanning the profile, where
# a slice fills the texels whose centres it covers (its edges snapped to 1/16 texel, the
# rasterizer's precision); then each of the overview's 1200 columns shows the one texel under its
# centre (nearest sampling). A slice that falls between the sampled texels is not drawn at all,
# and the outline of the viewport (here the whole profile) covers the 2 outermost columns on
# each side, where the first and last slices are. On a busy machine the rounds lie further apart
# and the slices are thinner: the edge rounds often, and any round sometimes, go undrawn.
# This model matched speedscope's pixels exactly in every screenshot examined.
drawn=$(jq -c '[.traceEvents[] | select(.ph == "X")] | (map(.ts) | min) as $t0 | ((map(.ts + .dur) | max) - $t0) as $w |
	def texel: ((. - $t0) / $w * 4096 * 16 | round) / 16;
	([.[] | (.ts | texel) as $a | (.ts + .dur | texel) as $b | range($a - 0.5 | ceil; $b - 0.5 | ceil)] |
		map({(tostring): true}) | add) as $lit |
	[range(2; 1198) | select($lit[(. + 0.5) * 4096 / 1200 | floor | tostring])] |
	reduce .[] as $x ([]; if length > 0 and $x - .[-1][1] <= 20 then .[-1][1] = $x else . + [[$x, $x]] end)' "$tmp/demo.json")
[ "$(jq length <<<"$drawn")" -ge 1 ] ||
	fail "speedscope would draw none of the slices in its overview (the JSON's: $want): nothing to check"
# the screenshot has exactly those runs of slice pixels: none missing, none anywhere else
assert_eq "$(jq length <<<"$runs")" "$(jq length <<<"$drawn")" \
	"runs of slice pixels in the screenshot ($runs; speedscope draws the JSON's slices $drawn; the JSON's groups: $want)"
jq -e --argjson d "$drawn" '[to_entries[] | (.value[0] - $d[.key][0] | fabs) <= 2 and (.value[1] - $d[.key][1] | fabs) <= 2] | all' \
	<<<"$runs" >/dev/null || fail "slice pixels in the screenshot ($runs) not where speedscope draws the JSON's slices ($drawn; the JSON's groups: $want)"

echo ok
