"""select-kernels{selector=heuristic arch=sm90 sms=0 cutlass=3 tuning_db="" gpu="" depthwise=direct small_m=skinny few_channels=stem few_pixels=splitk narrow_convs=halo halo_mode=4 halo_loads=auto conv_ctas=1 narrow_pointwise=stream narrow_windows=stream split_gemms=wgsplit conv_columns=cover}: chooses the
CUTLASS template instance of every op-level GEMM, conv and back-to-back op. On sm90 the
heuristic prefers CUTLASS 3.x instances (arch "sm90": wgmma, TMA) and keeps 2.x ones (arch
"sm80") where no 3.x instance runs the op or where 2.x is faster; `cutlass=2` keeps every
kernel 2.x. `selector=db` takes the fastest recorded candidate from the tuning database
(`tuning_db`, default ~/.cache/boltir/tuning.sqlite; `gpu` names the GPU whose records to
use, empty: any) and the heuristic's choice for the rest; `selector=tune` first measures
what the database lacks on this machine's GPU (boltir/backends/cuda/tune/tuner.py).
The heuristic runs depthwise convs on our own kernel (`depthwise=direct`,
codegen/depthwise_kernels.py) where it takes them; `depthwise=cutlass` keeps CUTLASS's.
GEMMs with few rows (M <= 16: batch-1 classifiers) run on our weight-streaming kernel
(`small_m=skinny`, codegen/skinny_gemm_kernels.py); `small_m=cutlass` keeps CUTLASS's.
Convs on few input channels (C <= 16, larger than 1x1: image stems) run on our own kernel
(`few_channels=stem`, codegen/stem_conv_kernels.py); `few_channels=cutlass` keeps CUTLASS's.
Convs with few output pixels and long reductions (batch 1's deep layers) run on our
split-reduction kernel on sm90 (`few_pixels=splitk`, codegen/splitk_conv_kernels.py, where
heuristic.splitk_conv_problem says so); `few_pixels=cutlass` keeps CUTLASS's. Convs on
8-64 input channels with many output pixels (VGG-16's and ResNet-50's first stages,
ResNet-50's space-to-depth stem; through its general form, stride 2, channels padded to a
swizzle row and partial output blocks: RepVGG-A0's 48-channel 3x3s)
run on our wgmma conv with its halo in shared memory on sm90 (`narrow_convs=halo`,
codegen/halo_conv_kernels.py, where heuristic.halo_conv_problem says so);
`narrow_convs=halo-aligned` keeps only the stride-1 convs on 16, 32 or 64 channels with
whole 64-channel output blocks (no general form); `narrow_convs=cutlass` keeps CUTLASS's; `halo_mode` is its schedule
(halo_conv_kernels.MODES: 1 keeps the filter in shared memory; 2 in registers; 3 overlaps
each tile's epilogue with the next tile's products; 4, the default
(halo_conv_kernels.DEFAULT_MODE), is 1 with its staged output written by stmatrix; 5 is 2 with
stmatrix); `halo_loads` how its input patches arrive ("auto", the default: by TMA, one box a
plane from the input's tensor map, for convs whose channels it pads (RepVGG-A0's 48, 1.07-1.36x
faster on the H100, bench/RESULTS.md), every thread's 16-byte cp.async for the others;
"cp_async" or "tma": that way wherever the tile takes it). Memory-bound
1x1 convs with fewer than 64 channels on one side (MobileNet's expand and project convs)
run on our streaming 1x1 conv on sm90 (`narrow_pointwise=stream`,
codegen/stream_conv_kernels.py, where heuristic.narrow_pointwise_problem says so);
`narrow_pointwise=cutlass` keeps the persistent 3.x GEMMs. Memory-bound convs with a small
window on 16 channels or fewer, stride 1 and no padding (MobileNet's blocked stem) run on the
same streaming kernel on sm90 (`narrow_windows=stream`, where
heuristic.narrow_window_problem says so); `narrow_windows=stem` leaves them to the rules
after it (our stem conv). `split_gemms=wgsplit`, the default, runs GEMMs of at most 256 rows
on sm90 whose K is at least 4 N (the batch-1 transformers' second FFN GEMM) on our kernel with
K split among a cluster's CTAs and their warp groups (codegen/wgsplit_gemm_kernels.py) where
it takes them; `split_gemms=cutlass` keeps CUTLASS's narrow tiles. `conv_ctas=2`
gives the 3.x implicit-GEMM convs the stages that let two CTAs share a multiprocessor (the
default, 1, takes as many as fit; 2 measured no faster on the H200, bench/RESULTS.md).
`conv_columns=cover`, the default, makes a 3.x implicit-GEMM conv's tile as wide as its
output channels where no 64-, 128- or 256-wide tile covers them (RepVGG-A0's 96 and 192:
1.3-1.65x faster on the H100, bench/RESULTS.md); `conv_columns=power2` keeps 64 or 128.

Requires: op-level IR (after the op-level passes).
Guarantees: every op.gemm, op.conv2d and op.b2b_* carries a `kernel` attribute with its
template parameters (see boltir/backends/cuda/select/heuristic.py), except b2b ops the selector
answers "unfuse" for, which are split back into their two GEMMs or convs, each with its
own choice. On sm90 with cutlass=3, every op.attention carries `kernel_arch = "sm90"`, or "sm90:SCHEDULE"
(its Hopper kernel where that takes it, and the schedule: attention_kernels.hopper_schedule). The computation is
unchanged. Only a profiling selector may touch a GPU; the heuristic one never does, so replaying a pipeline with bolt-opt stays deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from boltir.backends.cuda.codegen import attention_kernels, halo_conv_kernels
from boltir.backends.cuda.select.choice import (
    KERNEL_ATTR,
    UNFUSE,
    KernelSelector,
    unfuse,
)
from boltir.backends.cuda.select.heuristic import HeuristicSelector
from boltir.backends.cuda.tune.selectors import DatabaseSelector, TuningSelector
from boltir.diagnostics import BoltError
from boltir.dialects import op as ops
from boltir.passes import statistics

SELECTABLE = (ops.GemmOp, ops.Conv2dOp, ops.B2bGemmOp, ops.B2bConv2dOp, ops.DepthwisePointwiseConv2dOp)


SELECTORS = ("heuristic", "db", "tune")


DEPTHWISE_KERNELS = ("direct", "cutlass")
SMALL_M_KERNELS = ("skinny", "cutlass")
SPLIT_GEMM_KERNELS = ("cutlass", "wgsplit")
FEW_CHANNELS_KERNELS = ("stem", "cutlass")
FEW_PIXELS_KERNELS = ("splitk", "cutlass")
NARROW_CONV_KERNELS = ("cutlass", "halo", "halo-aligned")
NARROW_POINTWISE_KERNELS = ("stream", "cutlass")
NARROW_WINDOW_KERNELS = ("stream", "stem")
CONV_COLUMNS = ("cover", "power2")
HALO_LOADS = ("auto", "cp_async", "tma")


def make_selector(name: str, sms: int = 0, cutlass: int = 3, tuning_db: str = "", gpu: str = "",
                  depthwise: str = "direct", small_m: str = "skinny", few_channels: str = "stem",
                  few_pixels: str = "splitk", conv_ctas: int = 1, narrow_convs: str = "halo",
                  halo_mode: int = halo_conv_kernels.DEFAULT_MODE, narrow_pointwise: str = "stream",
                  narrow_windows: str = "stream", split_gemms: str = "wgsplit",
                  conv_columns: str = "cover", halo_loads: str = "auto") -> KernelSelector:
    """`heuristic` (shapes only), `db` (the tuning database, then the heuristic) or `tune`
    (measure what the database lacks on this GPU, then as `db`); `depthwise` says whose
    kernel the heuristic gives depthwise convs ("direct": ours, "cutlass": CUTLASS's), and
    `small_m` GEMMs with few rows ("skinny": ours, "cutlass": CUTLASS's), `few_channels`
    convs on few input channels ("stem": ours, "cutlass": CUTLASS's), `few_pixels` convs
    with few output pixels on sm90 ("splitk": ours, "cutlass": CUTLASS's), `narrow_convs`
    convs on 8-64 channels on sm90 ("halo": ours, `halo_mode` its mode; "halo-aligned": ours
    without its general form; "cutlass": CUTLASS's); `narrow_pointwise` memory-bound 1x1 convs with a narrow side on sm90
    ("stream": ours, "cutlass": the persistent 3.x GEMMs); `narrow_windows` memory-bound
    small-window convs on few channels on sm90 ("stream": ours, "stem": the rules after it);
    `split_gemms` GEMMs of at most 256 rows on sm90 past the skinny kernel's ("cutlass":
    CUTLASS's narrow tiles, "wgsplit": ours with K split among a cluster's warp groups, where K
    is at least 4 N); `conv_ctas`
    the 3.x implicit-GEMM convs' CTAs per multiprocessor (1: as many stages as fit);
    `conv_columns` their tile width ("cover": the output channels where no 64-, 128- or
    256-wide tile covers them; "power2": 64 or 128); `halo_loads` how the halo conv's patches
    arrive ("auto": by TMA on padded channels; "cp_async"; "tma")."""
    if name not in SELECTORS:
        raise BoltError(f"unknown kernel selector '{name}'; known: {', '.join(SELECTORS)}")
    if sms < 0:
        raise BoltError(f"sms must be a positive multiprocessor count (or 0 for the arch's), got {sms}")
    if cutlass not in (2, 3):
        raise BoltError(f"cutlass must be 2 (2.x kernels only) or 3 (3.x on sm90 where it runs), got {cutlass}")
    if depthwise not in DEPTHWISE_KERNELS:
        raise BoltError(f"depthwise must be one of {', '.join(DEPTHWISE_KERNELS)}; got '{depthwise}'")
    if split_gemms not in SPLIT_GEMM_KERNELS:
        raise BoltError(f"split_gemms must be one of {', '.join(SPLIT_GEMM_KERNELS)}; got '{split_gemms}'")
    if small_m not in SMALL_M_KERNELS:
        raise BoltError(f"small_m must be one of {', '.join(SMALL_M_KERNELS)}; got '{small_m}'")
    if few_channels not in FEW_CHANNELS_KERNELS:
        raise BoltError(f"few_channels must be one of {', '.join(FEW_CHANNELS_KERNELS)}; got '{few_channels}'")
    if few_pixels not in FEW_PIXELS_KERNELS:
        raise BoltError(f"few_pixels must be one of {', '.join(FEW_PIXELS_KERNELS)}; got '{few_pixels}'")
    if narrow_convs not in NARROW_CONV_KERNELS:
        raise BoltError(f"narrow_convs must be one of {', '.join(NARROW_CONV_KERNELS)}; got '{narrow_convs}'")
    if narrow_pointwise not in NARROW_POINTWISE_KERNELS:
        raise BoltError(f"narrow_pointwise must be one of {', '.join(NARROW_POINTWISE_KERNELS)}; got '{narrow_pointwise}'")
    if narrow_windows not in NARROW_WINDOW_KERNELS:
        raise BoltError(f"narrow_windows must be one of {', '.join(NARROW_WINDOW_KERNELS)}; got '{narrow_windows}'")
    if halo_mode not in halo_conv_kernels.MODES:
        raise BoltError(f"halo_mode must be one of {', '.join(map(str, halo_conv_kernels.MODES))}; got {halo_mode}")
    if conv_ctas not in (1, 2, 3):
        raise BoltError(f"conv_ctas must be 1, 2 or 3 CTAs per multiprocessor; got {conv_ctas}")
    if halo_loads not in HALO_LOADS:
        raise BoltError(f"halo_loads must be one of {', '.join(HALO_LOADS)}; got '{halo_loads}'")
    if conv_columns not in CONV_COLUMNS:
        raise BoltError(f"conv_columns must be one of {', '.join(CONV_COLUMNS)}; got '{conv_columns}'")
    heuristic = HeuristicSelector(sms=sms, cutlass=cutlass, direct_depthwise=depthwise == "direct",
                                  skinny_gemms=small_m == "skinny", stem_convs=few_channels == "stem",
                                  split_convs=few_pixels == "splitk", conv_ctas=conv_ctas,
                                  halo_convs=narrow_convs != "cutlass", halo_mode=halo_mode,
                                  halo_general=narrow_convs == "halo",
                                  narrow_pointwise=narrow_pointwise == "stream",
                                  stream_windows=narrow_windows == "stream", split_gemms=split_gemms == "wgsplit",
                                  cover_conv_columns=conv_columns == "cover", halo_loads=halo_loads)
    if name == "heuristic":
        return heuristic
    kind = DatabaseSelector if name == "db" else TuningSelector
    selector = kind(sms=sms, cutlass=cutlass, tuning_db=tuning_db, gpu=gpu)
    selector.heuristic = heuristic  # the same rules decide where the database has no record
    return selector


@dataclass(frozen=True)
class SelectKernelsPass(ModulePass):
    """Requires: op-level IR. Guarantees: every GEMM, conv and b2b op has a `kernel`."""

    name = "select-kernels"
    selector: str = "heuristic"
    arch: str = "sm90"
    sms: int = 0
    """The GPU's multiprocessor count, when the kernels' arch is not the GPU's (sm80
    kernels on a 132-SM H200: sms=132); 0 takes the arch's."""
    cutlass: int = 3
    """The newest CUTLASS generation to choose from: 3 takes 3.x (sm90) instances where
    they run on an sm90 target; 2 keeps every kernel a 2.x one."""
    tuning_db: str = ""
    """The tuning database file (selector=db and tune); empty: the default one."""
    gpu: str = ""
    """selector=db: the GPU whose records to take (e.g. "NVIDIA H200"); empty: any."""
    depthwise: str = "direct"
    """Whose kernel the heuristic gives depthwise convs: "direct" (ours) or "cutlass"."""
    small_m: str = "skinny"
    """Whose kernel the heuristic gives GEMMs with few rows: "skinny" (ours) or "cutlass"."""
    few_channels: str = "stem"
    """Whose kernel the heuristic gives convs on few input channels: "stem" (ours) or "cutlass"."""
    few_pixels: str = "splitk"
    """Whose kernel the heuristic gives convs with few output pixels on sm90: "splitk" (ours) or "cutlass"."""
    conv_ctas: int = 1
    """CTAs per multiprocessor of the heuristic's 3.x implicit-GEMM convs (1: as many stages as fit)."""
    narrow_convs: str = "halo"
    """Whose kernel the heuristic gives convs on 8-64 channels on sm90: "cutlass", "halo" (ours) or "halo-aligned"
    (ours without its general form: stride 1, 16, 32 or 64 channels, whole 64-channel output blocks)."""
    halo_mode: int = halo_conv_kernels.DEFAULT_MODE
    """The mode of our halo conv (halo_conv_kernels.MODES: 1 filter in shared memory, 2 in registers, 3 overlapped
    epilogues, 4 as 1 with stmatrix staging, 5 as 2 with stmatrix staging)."""
    narrow_pointwise: str = "stream"
    """Whose kernel the heuristic gives memory-bound 1x1 convs with a narrow side on sm90: "stream" (ours) or "cutlass"."""
    narrow_windows: str = "stream"
    """Whose kernel the heuristic gives memory-bound small-window convs on few channels on sm90: "stream" (ours) or "stem" (the rules after it)."""
    split_gemms: str = "wgsplit"
    """Whose kernel the heuristic gives GEMMs of at most 256 rows on sm90 past the skinny kernel's: "cutlass" or "wgsplit" (ours, where K is at least 4 N)."""
    conv_columns: str = "cover"
    """The width of the heuristic's 3.x conv tiles: "cover" (the output channels, where no 64-, 128- or 256-wide tile
    covers them) or "power2" (64 or 128)."""
    halo_loads: str = "auto"
    """How our halo conv's input patches arrive: "auto" (by TMA on padded channels), "cp_async" (every thread's 16-byte
    copies) or "tma" (one TMA box a plane, wherever the tile takes it)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.arch not in ("sm80", "sm90"):
            raise BoltError(f"arch must be one of sm80, sm90; got '{self.arch}'")
        selector = make_selector(self.selector, self.sms, self.cutlass, self.tuning_db, self.gpu, self.depthwise,
                                 self.small_m, self.few_channels, self.few_pixels, self.conv_ctas, self.narrow_convs,
                                 self.halo_mode, self.narrow_pointwise, self.narrow_windows, self.split_gemms,
                                 self.conv_columns, self.halo_loads)
        targets = [o for o in op.walk() if isinstance(o, SELECTABLE)]
        if hasattr(selector, "prepare"):
            selector.prepare(targets, self.arch)
        for target in targets:
            choice = selector.select(target, self.arch)
            if choice == UNFUSE:
                first, second = unfuse(target)
                block = target.parent
                block.insert_ops_before([first, second], target)
                target.output.replace_all_uses_with(second.output)
                block.erase_op(target)
                statistics.count(self, f"{target.name} unfused")
                for half in (first, second):
                    half.attributes[KERNEL_ATTR] = selector.select(half, self.arch).to_attr()
                    statistics.count(self, f"{half.name} kernels chosen")
                continue
            target.attributes[KERNEL_ATTR] = choice.to_attr()
            statistics.count(self, f"{target.name} kernels chosen")
        # op.attention: the Hopper kernel where it takes the op on an sm90 build, with a
        # bias too since its bias loads no longer wait one by one (attention_kernels)
        for attention in (o for o in op.walk() if isinstance(o, ops.AttentionOp)):
            attention_kernels.mark_target(attention, self.arch, self.cutlass, self.sms)
        for what, count in getattr(selector, "counts", {}).items():
            statistics.count(self, what, count)
        for note in getattr(selector, "notes", []):
            statistics.note(self, note)
