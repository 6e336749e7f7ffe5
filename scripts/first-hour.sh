#!/usr/bin/env bash
# A new user's first hour with the workbench, on a real X server (Xvfb through xcb, not Qt's
# offscreen platform) at a laptop's 1280x800: the GUI tests that walk it with mouse and keys, in
# the order a user meets it — the window fitting the screen with every example, runs belonging to
# their project, adding stages, the feature table, charts, the Profile dock, verdicts, the user
# guide, icons in both themes, save/close and the rest of the workbench. Fails when a test fails
# or when anything prints a warning or an error (Qt's own, ours, or the tests').
#
#   scripts/first-hour.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
command -v xvfb-run >/dev/null || { echo "first-hour.sh: xvfb-run is missing (scripts/setup-debian.sh installs xvfb)" >&2; exit 2; }

walk=(tst_workbench_layout tst_workbench_runs tst_workbench_adding tst_pipeline_canvas tst_feature_table_editor tst_source_spec_editors
      tst_chart_view tst_profile_panel tst_workbench_model tst_workbench tst_user_guide tst_toolbar_icons)
# Lines that are not problems: Qt Test's own headers, and the notes of a run the tests start.
benign='^(PASS|Config:|Totals:|\*\*\*\*\*\*\*\*\*|QDEBUG|QINFO)|XDG_RUNTIME_DIR not set'
failed=0
for t in "${walk[@]}"; do
  exe="$build/tests/$t"
  [ -x "$exe" ] || { echo "first-hour.sh: $exe is not built" >&2; exit 2; }
  log="$(mktemp)"
  status=0
  QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24" "$exe" > "$log" 2>&1 || status=$?
  problems="$(grep -Ev "$benign" "$log" | grep -Ev '^\s*$' || true)"
  if [ "$status" -ne 0 ] || [ -n "$problems" ]; then
    echo "== $t: exit $status"
    echo "$problems"
    failed=1
  else
    echo "== $t: $(grep -E '^Totals:' "$log")"
  fi
  rm -f "$log"
done
exit $failed
