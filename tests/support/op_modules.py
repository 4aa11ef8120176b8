"""Op-level test modules of one GEMM, conv or back-to-back op: `func.func @main` whose every
operand is a function argument, so that the op lowers to exactly one cutlass op whose
operands are those arguments. Shapes follow boltir's operator level: NHWC activations, OHWI
filters, Linear-style ("col") GEMM weights."""

from __future__ import annotations

from boltir.dialects.shapes import window_output_size


def tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def _module(args: list[tuple[str, str]], op_text: str, result: str) -> str:
    params = ", ".join(f"%{n}: {t}" for n, t in args)
    types = ", ".join(t for _, t in args)
    return (
        f"func.func @main({params}) -> {result} {{\n"
        f"  %0 = {op_text} : ({types}) -> {result}\n"
        f"  func.return %0 : {result}\n}}\n"
    )


def _epilogue_operands(args, epilogue: str, out_shape, channels: int, element: str) -> str:
    text = ""
    if "bias" in [part.strip() for part in epilogue.split(",")]:
        args.append(("bias", tensor((channels,), element)))
        text += " bias %bias"
    if "residual" in epilogue:
        args.append(("residual", tensor(out_shape, element)))
        text += " residual %residual"
    return text


def gemm_text(m: int, n: int, k: int, element: str = "f16", epilogue: str = "bias, relu", batch: int | None = None,
              shared_b: bool = False, layout_b: str = "col") -> str:
    """A Linear-style GEMM: x (m×k, or batch×m×k) times a weight n×k ("col" B), or k×n
    (`layout_b` "row": a MatMul's)."""
    lead = (batch,) if batch else ()
    a_shape, out_shape = (*lead, m, k), (*lead, m, n)
    weight = (n, k) if layout_b == "col" else (k, n)
    b_shape = weight if (shared_b or not batch) else (batch, *weight)
    args = [("x", tensor(a_shape, element)), ("w", tensor(b_shape, element))]
    extra = _epilogue_operands(args, epilogue, out_shape, n, element)
    op = f'op.gemm %x, %w{extra} {{layout_b = "{layout_b}", epilogue = #op.epilogue<{epilogue}>}}'
    return _module(args, op, tensor(out_shape, element))


def conv_text(n: int, h: int, w: int, c: int, k: int, r: int, s: int, stride: int = 1, pad: int | None = None,
              element: str = "f16", epilogue: str = "bias, relu", depthwise: bool = False,
              pads: tuple[int, int, int, int] | None = None, dilation: int = 1) -> str:
    """An NHWC conv with OHWI filters (depthwise: groups = c = k, filter k×r×s×1); `pads`
    (top, left, bottom, right) overrides the symmetric `pad`."""
    pad = (r // 2) if pad is None else pad
    top, left, bottom, right = pads or (pad,) * 4
    p = window_output_size(h, r, stride, top, bottom, dilation)
    q = window_output_size(w, s, stride, left, right, dilation)
    out_shape = (n, p, q, k)
    args = [("x", tensor((n, h, w, c), element)), ("w", tensor((k, r, s, 1 if depthwise else c), element))]
    extra = _epilogue_operands(args, epilogue, out_shape, k, element)
    groups = f", groups = {c}" if depthwise else ""
    op = (
        f"op.conv2d %x, %w{extra} {{layout = \"NHWC\", filter_layout = \"OHWI\", strides = array<i64: {stride}, {stride}>, "
        f"pads = array<i64: {top}, {left}, {bottom}, {right}>{groups}, "
        f"{f'dilations = array<i64: {dilation}, {dilation}>, ' if dilation != 1 else ''}epilogue = #op.epilogue<{epilogue}>}}"
    )
    return _module(args, op, tensor(out_shape, element))


def b2b_gemm_text(m: int, k0: int, n0: int, n1: int, epilogue0: str = "bias, relu", epilogue1: str = "bias, relu") -> str:
    args = [("x", tensor((m, k0), "f16")), ("w0", tensor((n0, k0), "f16")), ("w1", tensor((n1, n0), "f16"))]
    extra = ""
    if "bias" in epilogue0:
        args.append(("bias0", tensor((n0,), "f16")))
        extra += " bias0 %bias0"
    if "bias" in epilogue1:
        args.append(("bias1", tensor((n1,), "f16")))
        extra += " bias1 %bias1"
    op = (
        f'op.b2b_gemm %x, %w0, %w1{extra} {{layout_b0 = "col", layout_b1 = "col", '
        f"epilogue0 = #op.epilogue<{epilogue0}>, epilogue1 = #op.epilogue<{epilogue1}>}}"
    )
    return _module(args, op, tensor((m, n1), "f16"))


def b2b_conv_text(n: int, h: int, w: int, c: int, k0: int, k1: int, r: int = 3, stride: int = 1,
                  epilogue0: str = "bias, relu", epilogue1: str = "bias, relu") -> str:
    pad = r // 2
    p = window_output_size(h, r, stride, pad, pad, 1)
    q = window_output_size(w, r, stride, pad, pad, 1)
    args = [("x", tensor((n, h, w, c), "f16")), ("w0", tensor((k0, r, r, c), "f16")), ("w1", tensor((k1, 1, 1, k0), "f16"))]
    extra = ""
    if "bias" in epilogue0:
        args.append(("bias0", tensor((k0,), "f16")))
        extra += " bias0 %bias0"
    if "bias" in epilogue1:
        args.append(("bias1", tensor((k1,), "f16")))
        extra += " bias1 %bias1"
    op = (
        f"op.b2b_conv2d %x, %w0, %w1{extra} {{strides = array<i64: {stride}, {stride}>, "
        f"pads = array<i64: {pad}, {pad}, {pad}, {pad}>, epilogue0 = #op.epilogue<{epilogue0}>, "
        f"epilogue1 = #op.epilogue<{epilogue1}>}}"
    )
    return _module(args, op, tensor((n, p, q, k1), "f16"))


def conv_args(x: str, filter_type: str, bias_type: str, out: str, residual: bool) -> str:
    """The parameters `%x, %w, %b[, %res]` of a conv_line module."""
    return f"%x: {x}, %w: {filter_type}, %b: {bias_type}" + (f", %res: {out}" if residual else "")


def conv_line(input_: str, input_type: str, filter_type: str, bias_type: str, out: str, residual: bool,
              attrs: str = "") -> str:
    """An op.conv2d of `input_` with `%w`, bias `%b`, ReLU and (`residual`) `%res` added."""
    epilogue = "bias, relu, residual = add" if residual else "bias, relu"
    operands = f"{input_}, %w bias %b" + (" residual %res" if residual else "")
    types = f"{input_type}, {filter_type}, {bias_type}" + (f", {out}" if residual else "")
    return f"op.conv2d {operands} {{{attrs}epilogue = #op.epilogue<{epilogue}>}} : ({types}) -> {out}"


def two_ops_text(args: str, first: str, first_type: str, second: str, second_type: str, users: int = 1) -> str:
    """`func.func @main(args)`: %0 = first, %1 = second (which reads %0); it returns %1, and
    %0 too where `users` is 2 (%0's second user)."""
    results, returned = ((f"({second_type}, {first_type})", f"%1, %0 : {second_type}, {first_type}") if users == 2
                         else (second_type, f"%1 : {second_type}"))
    return f"func.func @main({args}) -> {results} {{\n  %0 = {first}\n  %1 = {second}\n  func.return {returned}\n}}\n"


def blocked_stem_text(n=1, c=3, h=16, w=30, pads=(3, 3, 3, 3), k=64, r=4, channels=16, image="f32", element="f16",
                      layout="NCHW", users=1, residual=False) -> str:
    """An image blocked 2×2 by op.space_to_depth (padded, channels up to `channels`), then a
    conv (bias, ReLU): ResNet-50's stem after the space-to-depth rewrite, small. `users=2`:
    the blocked tensor is returned too."""
    top, left, bottom, right = pads
    bh, bw = (h + top + bottom) // 2, (w + left + right) // 2
    x = tensor((n, c, h, w) if layout == "NCHW" else (n, h, w, c), image)
    blocked = tensor((n, bh, bw, channels), element)
    f, b = tensor((k, r, r, channels), element), tensor((k,), element)
    out = tensor((n, bh - r + 1, bw - r + 1, k), element)
    blocking = (f"op.space_to_depth %x {{blocksize = 2 : i64, layout = \"{layout}\", pads = array<i64: "
                f"{', '.join(map(str, pads))}>}} : {x} -> {blocked}")
    return two_ops_text(conv_args(x, f, b, out, residual), blocking, blocked,
                        conv_line("%0", blocked, f, b, out, residual), out, users)


def depthwise_pointwise_text(n=1, h=10, w=10, c=32, k=16, r=3, s=3, strides=(1, 1), pads=(1, 1, 1, 1),
                             dilations=(1, 1), element="f16", bias=True, residual=False, users=1) -> str:
    """A depthwise conv (bias, ReLU6) and a 1x1 conv of its result (bias, the residual added):
    MobileNet's inverted residual after its expansion. Arguments %x, %w0, %w1, %b0, %b1, %res;
    `users=2` returns the depthwise result too."""
    ph = window_output_size(h, r, strides[0], pads[0], pads[2], dilations[0])
    pw = window_output_size(w, s, strides[1], pads[1], pads[3], dilations[1])
    x, mid, out = tensor((n, h, w, c), element), tensor((n, ph, pw, c), element), tensor((n, ph, pw, k), element)
    w0, w1 = tensor((c, r, s, 1), element), tensor((k, 1, 1, c), element)
    args = [f"%x: {x}", f"%w0: {w0}", f"%w1: {w1}"]
    if bias:
        args += [f"%b0: {tensor((c,), element)}", f"%b1: {tensor((k,), element)}"]
    if residual:
        args.append(f"%res: {out}")
    window = (f"strides = array<i64: {strides[0]}, {strides[1]}>, pads = array<i64: {', '.join(map(str, pads))}>, "
              f"dilations = array<i64: {dilations[0]}, {dilations[1]}>, groups = {c} : i64")
    epilogue0 = "bias, clip(0.0, 6.0)" if bias else "clip(0.0, 6.0)"
    epilogue1 = ", ".join((["bias"] if bias else []) + (["residual = add"] if residual else []))
    first_types = f"{x}, {w0}" + (f", {tensor((c,), element)}" if bias else "")
    second_types = f"{mid}, {w1}" + (f", {tensor((k,), element)}" if bias else "") + (f", {out}" if residual else "")
    results, returned = (f"({out}, {mid})", f"%1, %0 : {out}, {mid}") if users == 2 else (out, f"%1 : {out}")
    return (f"func.func @main({', '.join(args)}) -> {results} {{\n"
            f"  %0 = op.conv2d %x, %w0{' bias %b0' if bias else ''} {{{window}, epilogue = #op.epilogue<{epilogue0}>}} : "
            f"({first_types}) -> {mid}\n"
            f"  %1 = op.conv2d %0, %w1{' bias %b1' if bias else ''}{' residual %res' if residual else ''} "
            f"{{epilogue = #op.epilogue<{epilogue1}>}} : ({second_types}) -> {out}\n"
            f"  func.return {returned}\n}}\n")


def inverted_residual_text(n=1, h=10, w=10, cin=16, c=64, k=16, stride=1, pads=(1, 1, 1, 1), element="f16",
                           residual=None, users=1) -> str:
    """MobileNetV2's inverted residual: a 1x1 expansion (bias, ReLU6) from `cin` to `c`
    channels, a 3x3 depthwise conv (bias, ReLU6), a 1x1 projection to `k` (bias, the block's
    input added where `residual`; default: stride 1 and cin == k). Arguments %x, %we, %be,
    %w0, %b0, %w1, %b1; `users=2` returns the expansion's result too."""
    residual = (stride == 1 and cin == k) if residual is None else residual
    p = window_output_size(h, 3, stride, pads[0], pads[2], 1)
    q = window_output_size(w, 3, stride, pads[1], pads[3], 1)
    x, wide, mid, out = (tensor(shape, element) for shape in ((n, h, w, cin), (n, h, w, c), (n, p, q, c), (n, p, q, k)))
    we, w0, w1 = tensor((c, 1, 1, cin), element), tensor((c, 3, 3, 1), element), tensor((k, 1, 1, c), element)
    be, b0, b1 = tensor((c,), element), tensor((c,), element), tensor((k,), element)
    window = (f"strides = array<i64: {stride}, {stride}>, pads = array<i64: {', '.join(map(str, pads))}>, "
              f"groups = {c} : i64")
    results, returned = (f"({out}, {wide})", f"%2, %0 : {out}, {wide}") if users == 2 else (out, f"%2 : {out}")
    return (f"func.func @main(%x: {x}, %we: {we}, %be: {be}, %w0: {w0}, %b0: {b0}, %w1: {w1}, %b1: {b1}) -> {results} {{\n"
            f"  %0 = op.conv2d %x, %we bias %be {{epilogue = #op.epilogue<bias, clip(0.0, 6.0)>}} : ({x}, {we}, {be}) -> {wide}\n"
            f"  %1 = op.conv2d %0, %w0 bias %b0 {{{window}, epilogue = #op.epilogue<bias, clip(0.0, 6.0)>}} : "
            f"({wide}, {w0}, {b0}) -> {mid}\n"
            f"  %2 = op.conv2d %1, %w1 bias %b1{' residual %x' if residual else ''} "
            f"{{epilogue = #op.epilogue<bias{', residual = add' if residual else ''}>}} : "
            f"({mid}, {w1}, {b1}{f', {out}' if residual else ''}) -> {out}\n"
            f"  func.return {returned}\n}}\n")
