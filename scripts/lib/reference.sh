# Sourced by the scripts that fetch the test suite's references (fetch-python-test-deps.sh,
# fetch-arrow.sh). A reference that cannot be had is never a silent pass:
#   reference_missing WHAT WHY
# under CI=true fails the run naming WHAT and WHY (exit 1); elsewhere it says what the tests will
# skip and returns 1, so that the caller carries on without it.
reference_missing() {
  local what=$1 why=$2
  if [[ "${CI:-}" == "true" ]]; then
    echo "$(basename "$0"): $what: $why; CI=true needs every reference, so the run stops here" >&2
    exit 1
  fi
  echo "$(basename "$0"): $what: $why; the tests that need it report a skip" >&2
  return 1
}
