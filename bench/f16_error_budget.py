"""Where an f16 build's error against PyTorch fp32 comes from (the correctness criterion's
first half, `boltir.accuracy`), on the CPU, no GPU: for one bench model (random weights conditioned as in
bench/models.py) and one random input, ‖Δ‖/‖ref‖ against the fp32 model of

- the fp32 model with its weights and input rounded to f16, computed in fp32: the error
  of storing the model in f16 at all, before any f16 arithmetic;
- boltir's op-level module at f16 (the pipeline up to `pad-alignment` and the fusions,
  run in the numpy interpreter: f16 storage, f32 accumulation, as the CUDA kernels do);
- PyTorch's own fp16 run on the CPU, where torch has the kernels;
- the same op-level module at f16 computing in f64 (`boltir.interp.wide_arithmetic`)
  against its f32-arithmetic run: two equally valid f16 runs, whose difference is the
  model's own rounding noise, the floor under the criterion's interpreter half;

and how much of the fp32 output sits below f16's normal range.

    python3 -m bench.f16_error_budget resnet50 [--batch 1]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

from boltir.accuracy import INTERPRETER_BOUND, below_normal_fraction
from boltir.accuracy import relative_l2 as relative


def main() -> int:
    import torch

    from bench import models
    from boltir.compiler import lower_model
    from boltir.interp import run, wide_arithmetic
    from boltir.pipelines import default_pipeline

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=[m for m in models.MODELS if m != "bert"])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--work", default="/tmp/boltir-models")
    args = parser.parse_args()

    model = models.make_model(args.model)
    image = torch.randn(args.batch, 3, 224, 224, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        reference = model(image).numpy()
        rounded = copy.deepcopy(model)
        for tensor in [*rounded.parameters(), *rounded.buffers()]:
            if tensor.is_floating_point():
                tensor.copy_(tensor.half().float())
        stored = rounded(image.half().float()).numpy()
        try:
            half = model.half()(image.half()).float().numpy()
            torch_half = f"{relative(half, reference):.2e}"
        except RuntimeError as error:  # no CPU kernel for some f16 op
            torch_half = f"n/a ({str(error).splitlines()[0][:50]})"

    onnx_path = Path(args.work) / f"{args.model}_b{args.batch}_error_budget.onnx"
    onnx_path.parent.mkdir(parents=True, exist_ok=True)
    models.export(args.model, models.make_model(args.model), {"image": image}, onnx_path)
    module, _, _ = lower_model(onnx_path, arch="sm90", dtype="f16", pipeline=default_pipeline(dtype="f16", arch="sm90"))
    start = time.monotonic()
    (ours,) = run(module, {"image": image.numpy()})
    seconds = time.monotonic() - start
    with wide_arithmetic():
        (wide,) = run(module, {"image": image.numpy()})

    print(f"{args.model} b{args.batch}: ‖Δ‖/‖ref‖ against the fp32 model")
    print(f"  fp32 arithmetic, weights and input rounded to f16: {relative(stored, reference):.2e}")
    print(f"  boltir op-level module at f16 (interpreter, {seconds:.1f} s): {relative(ours, reference):.2e}"
          f"  (against the rounded fp32 model: {relative(ours, stored):.2e})")
    print(f"  PyTorch fp16 on the CPU: {torch_half}")
    print(f"  the op-level module at f16 computing in f64, against the above (the model's f16 rounding noise; "
          f"the criterion's interpreter bar is {INTERPRETER_BOUND:.0e}): {relative(ours, wide):.2e}")
    print(f"  fp32 output values below f16's normal range: {below_normal_fraction(reference, 'f16'):.1%} of the nonzero ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
