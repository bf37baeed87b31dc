#!/usr/bin/env bash
# make check-portable: the whole pipeline (every notebook, figure, derived file, the claims check and
# the report) rerun under another OpenBLAS kernel and under two BLAS threads per kernel (the build's own
# default is one, analysis.build.KERNEL_BLAS_ENV); each run must leave the tracked outputs exactly as
# committed (`git status` clean). Issue 21.
#   PY=.venv/bin/python JOBS=2 scripts/check_portable.sh
set -uo pipefail
PY=${PY:-.venv/bin/python}
JOBS=${JOBS:-2}
OUTPUTS=(data/derived figures notebooks README.md)
if ! git diff --quiet -- "${OUTPUTS[@]}" || [ -n "$(git ls-files --others --exclude-standard -- "${OUTPUTS[@]}")" ]; then
    echo "error: commit or stash the changes to ${OUTPUTS[*]} first (the check compares with the committed outputs)" >&2
    exit 2
fi
# the BLAS kernels and thread counts in use, as threadpoolctl names them
KERNEL="import numpy, scipy.linalg, threadpoolctl; print(sorted({(i['internal_api'], i.get('architecture'), i['num_threads']) for i in threadpoolctl.threadpool_info()}, key=str))"
status=0
mkdir -p out
echo "default: $("$PY" -c "$KERNEL")"
for setting in "OPENBLAS_CORETYPE=Prescott" "OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2"; do
    echo "== $setting: $(env $setting "$PY" -c "$KERNEL")"
    if ! env $setting "$PY" -m analysis.build --jobs "$JOBS" --claims --heartbeat 0 || ! env $setting "$PY" -m analysis report; then
        echo "error: the pipeline failed under $setting" >&2
        exit 1
    fi
    if git diff --quiet -- "${OUTPUTS[@]}"; then
        echo "   every tracked output is byte-identical to the committed one"
    else
        echo "   changed under $setting:" >&2
        git diff --stat -- "${OUTPUTS[@]}" >&2
        git diff -- "${OUTPUTS[@]}" > "out/check-portable-$(echo "$setting" | tr ' =' '_-').diff"
        git checkout -- "${OUTPUTS[@]}"
        status=1
    fi
done
exit $status
