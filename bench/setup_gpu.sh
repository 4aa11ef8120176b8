# Sourced at the start of every command on the GPU machine (a bare machine each time):
#   source bench/setup_gpu.sh && python3 -m bench.check_kernels
# with `carry: [".whl", ".kcache"]` (.kcache: optional, an object cache filled here by
# `BOLTIR_CACHE_DIR=.kcache python3 -m bench.check_kernels --build-only`).
# It installs the carried wheels (.whl/, made by bench/fetch_wheels.sh) into /tmp/site,
# without dependencies or an index, and puts them and this checkout on PYTHONPATH; the
# machine's own python3 already has torch, numpy, onnx, jinja2, networkx, tqdm, ml_dtypes.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! ls "$repo_root"/.whl/*.whl >/dev/null 2>&1; then
  echo "no wheels in $repo_root/.whl: run bench/fetch_wheels.sh here and carry .whl" >&2
  return 1 2>/dev/null || exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$repo_root"/.whl/*.whl \
  || { echo "installing the carried wheels failed" >&2; return 1 2>/dev/null || exit 1; }
# CuPy, when carried (.whl_cupy/, made by bench/fetch_cupy.sh): the DLPack check of bench/users_path.py
if ls "$repo_root"/.whl_cupy/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$repo_root"/.whl_cupy/*.whl \
    || echo "installing the carried CuPy failed; the DLPack check will say cupy is not importable" >&2
fi
export PYTHONPATH="/tmp/site:$repo_root${PYTHONPATH:+:$PYTHONPATH}"
# boltir runs from the checkout, not installed: a dist-info with pyproject's entry points
# lets torch.compile find backend="boltir" (importlib.metadata reads it from PYTHONPATH).
mkdir -p /tmp/site/boltir-0+checkout.dist-info
printf 'Metadata-Version: 2.1\nName: boltir\nVersion: 0+checkout\n' > /tmp/site/boltir-0+checkout.dist-info/METADATA
python3 - "$repo_root/pyproject.toml" > /tmp/site/boltir-0+checkout.dist-info/entry_points.txt <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
groups = {"console_scripts": project.get("scripts", {}), **project.get("entry-points", {})}
for group, entries in groups.items():
    print(f"[{group}]", *(f"{name} = {target}" for name, target in entries.items()), "", sep="\n")
PY
export BOLTIR_CACHE_DIR="${BOLTIR_CACHE_DIR:-/tmp/boltir-cache}"
# Objects compiled here ahead of time (carry .kcache) are hits there when nvcc, flags and
# CUTLASS match: the cache key holds all three.
# members/ (carry .kcache/members) says which of them hold the kernels of other units.
for part in objects members; do
  if [ -d "$repo_root/.kcache/$part" ]; then
    mkdir -p "$BOLTIR_CACHE_DIR" && cp -r "$repo_root/.kcache/$part" "$BOLTIR_CACHE_DIR/"
  fi
done
export PYTHONUNBUFFERED=1
python3 -c "import xdsl, boltir, torch; print('boltir on', torch.cuda.get_device_name(0), '| torch', torch.__version__, '| xdsl', xdsl.__version__ if hasattr(xdsl, '__version__') else '0.75')"
