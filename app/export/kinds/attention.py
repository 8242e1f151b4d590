"""MultiheadAttention and the Transformer layers: PyTorch, ONNX and engine-script export
(see app.export.kinds for each table's form).

- PyTorch: nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.TransformerEncoder
  (enable_nested_tensor off, so it computes what the engine does) and
  nn.TransformerDecoderLayer. MultiheadAttention's Parameters have torch's names already;
  the layers' `dense1`/`dense2` become `linear1`/`linear2` and the LayerNorms' gamma/beta
  weight/bias (TORCH_STATE, given the Parameter's name inside the node, e.g.
  'layers.0.dense1.weight'). `causal` becomes a boolean upper-triangular mask.
- Engine script: the engine's own classes, called as the node's Cell calls them.
- ONNX (opset 17): attention decomposed into MatMul, Softmax, Reshape and Transpose (the
  in-projection weights stored transposed), the norms as LayerNormalization, gelu as
  0.5·x·(1 + erf(x/√2)); dropout is left out (inference).
MultiheadAttention's masks arriving on its ports are per sample, as the node takes them:
key_padding_mask (N, S) and attn_mask (N, L, S), float (added to the scores; bool in the
engine script only, from a custom Cell). PyTorch and the engine layer take a 3-D attn_mask
per head, (N·heads, L, S): the script repeats each sample's mask over the heads, as the
node's Cell does; ONNX adds them to the scores, broadcast over the heads. Inputs after an
open port arrive by name ('attn_mask=m' in the scripts, `args.ports` in ONNX), as the
compiled graph passes them.
"""

from __future__ import annotations

import math

import numpy as np

from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState
from app.export.report import ExportError

TORCH: dict[str, TorchLayer] = {}


MHA_PORTS = ("query", "key", "value", "key_padding_mask", "attn_mask")


def mha_inputs(args: list[str]) -> dict[str, str]:
    """{port: expression} of a MultiheadAttention node's call arguments: positional ones in
    port order, then those passed by name ('attn_mask=m', after an open port); key falls
    back to the query and value to the key, as the node's Cell does."""
    given: dict[str, str] = {}
    for i, arg in enumerate(args):
        port, by_name, expr = arg.partition("=")
        if by_name and port in MHA_PORTS:
            given[port] = expr
        else:
            given[MHA_PORTS[i]] = arg
    given.setdefault("key", given["query"])
    given.setdefault("value", given["key"])
    return given


def _time(batch_first: bool) -> int:
    return 1 if batch_first else 0


# ----------------------------------------------------------------------------- PyTorch


def _torch_causal(q: str, k: str, batch_first: bool) -> str:
    t = _time(batch_first)
    return (f"torch.triu(torch.ones({q}.shape[{t}], {k}.shape[{t}], dtype=torch.bool, "
            f"device={q}.device), 1)")


def _torch_masks(cell, given: dict[str, str]) -> str:
    """The mask arguments of torch's call: float masks in the query's dtype (the engine
    adds them in its dtype), the per-sample attn_mask repeated over the heads, and the
    causal mask joined in (as -inf when a float mask comes too: torch wants one kind)."""
    q, k, bf = given["query"], given["key"], cell.batch_first
    masks = ""
    if "key_padding_mask" in given:
        masks += f", key_padding_mask={given['key_padding_mask']}.to({q}.dtype)"
    if "attn_mask" in given:
        mask = f"{given['attn_mask']}.to({q}.dtype).repeat_interleave({cell.num_heads}, 0)"
        if cell.causal:
            mask += f".masked_fill({_torch_causal(q, k, bf)}, -torch.inf)"
        masks += f", attn_mask={mask}"
    elif cell.causal and "key_padding_mask" in given:
        t = _time(bf)
        masks += (f", attn_mask=torch.full(({q}.shape[{t}], {k}.shape[{t}]), -torch.inf, "
                  f"dtype={q}.dtype, device={q}.device).triu(1)")
    elif cell.causal:
        masks += f", attn_mask={_torch_causal(q, k, bf)}"
    return masks


def _torch_mha(cell, args: list[str]) -> tuple[str, list[str], str]:
    given = mha_inputs(args)
    extra = "" if cell.has_bias else ", bias=False"
    if not cell._qkv_same_embed_dim:
        extra += f", kdim={cell.kdim}, vdim={cell.vdim}"
    module = (f"nn.MultiheadAttention({cell.embed_dim}, {cell.num_heads}, "
              f"dropout={cell.dropout!r}{extra}, batch_first={cell.batch_first})")
    call = (f"{{}}({given['query']}, {given['key']}, {given['value']}"
            f"{_torch_masks(cell, given)}, average_attn_weights={cell.average_attn_weights})")
    return module, [], call


def _torch_layer_args(cell) -> str:
    return (f"{cell.d_model}, {cell.nhead}, dim_feedforward={cell.dim_feedforward}, "
            f"dropout={cell.dropout_num!r}, activation={cell.activation_name!r}, "
            f"layer_norm_eps={cell.layernorm_eps!r}, batch_first={cell.batch_first}, "
            f"norm_first={cell.norm_first}")


def _torch_encoder_layer(cell, args: list[str]) -> tuple[str, list[str], str]:
    (x,) = args
    mask = f", src_mask={_torch_causal(x, x, cell.batch_first)}" if cell.causal else ""
    return f"nn.TransformerEncoderLayer({_torch_layer_args(cell)})", [], f"{{}}({x}{mask})"


def _torch_encoder(cell, args: list[str]) -> tuple[str, list[str], str]:
    (x,) = args
    layer = cell.layers[0]
    norm = (f", norm=nn.LayerNorm({layer.d_model}, eps={cell.norm.epsilon!r})"
            if cell.norm is not None else "")
    module = (f"nn.TransformerEncoder(nn.TransformerEncoderLayer({_torch_layer_args(layer)}), "
              f"{cell.num_layers}{norm}, enable_nested_tensor=False)")
    mask = f", mask={_torch_causal(x, x, cell.batch_first)}" if cell.causal else ""
    return module, [], f"{{}}({x}{mask})"


def _torch_decoder_layer(cell, args: list[str]) -> tuple[str, list[str], str]:
    tgt, memory = args
    mask = f", tgt_mask={_torch_causal(tgt, tgt, cell.batch_first)}" if cell.causal else ""
    return (f"nn.TransformerDecoderLayer({_torch_layer_args(cell)})", [],
            f"{{}}({tgt}, {memory}{mask})")


TORCH_OPS: dict[str, TorchOp] = {
    "MultiheadAttention": _torch_mha,
    "TransformerEncoderLayer": _torch_encoder_layer,
    "TransformerEncoder": _torch_encoder,
    "TransformerDecoderLayer": _torch_decoder_layer,
}

_RENAMES = (("dense1.", "linear1."), ("dense2.", "linear2."))
_NORM = {"gamma": "weight", "beta": "bias"}


def torch_local(local: str) -> str:
    """A Transformer layer's Parameter name inside its node, as torch names it."""
    for a, b in _RENAMES:
        if local.startswith(a) or f".{a}" in local:
            local = local.replace(a, b)
    head, _, last = local.rpartition(".")
    if "norm" in head.rpartition(".")[2]:
        last = _NORM.get(last, last)
    return f"{head}.{last}" if head else last


def _layer_state(local: str, array: np.ndarray) -> tuple[str, np.ndarray] | None:
    return torch_local(local), array


TORCH_STATE: dict[str, TorchState] = {
    "TransformerEncoderLayer": _layer_state,
    "TransformerEncoder": _layer_state,
    "TransformerDecoderLayer": _layer_state,
}

# ----------------------------------------------------------------------------- engine script


def _python_causal(q: str, k: str, batch_first: bool) -> str:
    t = _time(batch_first)
    return (f"ops.causal_mask(max({q}.shape[{t}], {k}.shape[{t}]))"
            f"[:{q}.shape[{t}], :{k}.shape[{t}]]")


def _python_masks(values, given: dict[str, str]) -> str:
    """The mask arguments of the engine layer's call, as the node's Cell makes them: the
    per-sample attn_mask repeated over the heads, (N·heads, L, S), the causal mask added
    (-inf above the diagonal; for a bool mask, adding is `or`)."""
    q, k, bf = given["query"], given["key"], values["batch_first"]
    masks = ""
    if "key_padding_mask" in given:
        masks += f", key_padding_mask={given['key_padding_mask']}"
    if "attn_mask" in given:
        m = given["attn_mask"]
        mask = (f"ops.reshape(ops.tile(ops.expand_dims({m}, 1), (1, {values['num_heads']}, "
                f"1, 1)), (-1, {m}.shape[1], {m}.shape[2]))")
        if values["causal"]:
            t = _time(bf)
            mask = (f"ops.add({mask}, ops.causal_mask(max({q}.shape[{t}], {k}.shape[{t}]), "
                    f"{m}.dtype)[:{q}.shape[{t}], :{k}.shape[{t}]])")
        masks += f", attn_mask={mask}"
    elif values["causal"]:
        masks += f", attn_mask={_python_causal(q, k, bf)}"
    return masks


def _python_mha(values, args: list[str]) -> tuple[str, list[str], str]:
    given = mha_inputs(args)
    extra = "" if values["dropout"] == 0.0 else f", dropout={values['dropout']!r}"
    extra += "" if values["has_bias"] else ", has_bias=False"
    for key in ("kdim", "vdim"):
        if values[key] is not None:
            extra += f", {key}={values[key]}"
    module = (f"nn.MultiheadAttention({values['embed_dim']}, {values['num_heads']}{extra}, "
              f"batch_first={values['batch_first']})")
    return module, [], (f"{{}}({given['query']}, {given['key']}, {given['value']}"
                        f"{_python_masks(values, given)}, "
                        f"average_attn_weights={values['average_attn_weights']})")


def _python_layer_args(v) -> str:
    return (f"{v['d_model']}, {v['nhead']}, {v['dim_feedforward']}, {v['dropout']!r}, "
            f"{v['activation']!r}, {v['layer_norm_eps']!r}, {v['batch_first']}, "
            f"{v['norm_first']}")


def _python_layer(cls: str, inputs: int):
    def made(values, args: list[str]) -> tuple[str, list[str], str]:
        if len(args) != inputs:
            raise ExportError(f"{cls}: expected {inputs} inputs, got {len(args)}")
        x = args[0]
        mask = f", {_python_causal(x, x, values['batch_first'])}" if values["causal"] else ""
        if cls == "TransformerEncoder":
            norm = (f", nn.LayerNorm(({values['d_model']},), "
                    f"epsilon={values['layer_norm_eps']!r})" if values["final_norm"] else "")
            module = (f"nn.TransformerEncoder(nn.TransformerEncoderLayer("
                      f"{_python_layer_args(values)}), {values['num_layers']}{norm})")
        else:
            module = f"nn.{cls}({_python_layer_args(values)})"
        return module, [], f"{{}}({', '.join(args)}{mask})"

    return made


PYTHON_OPS: dict[str, PythonOp] = {
    "MultiheadAttention": _python_mha,
    "TransformerEncoderLayer": _python_layer("TransformerEncoderLayer", 1),
    "TransformerEncoder": _python_layer("TransformerEncoder", 1),
    "TransformerDecoderLayer": _python_layer("TransformerDecoderLayer", 2),
}

# ----------------------------------------------------------------------------- ONNX


def _const(w, name: str, array: np.ndarray) -> str:
    return w._const(name, np.ascontiguousarray(array, dtype=np.float32))


def _shape(w, name: str, sizes) -> str:
    return w._const(name, np.asarray(sizes, np.int64))


def _project(w, x: str, weight: np.ndarray, bias: np.ndarray | None, path: str) -> str:
    out = w._op("MatMul", [x, _const(w, f"{path}.weight_t", weight.T)], f"{path}/matmul")
    return out if bias is None else w._op("Add", [out, _const(w, f"{path}.bias", bias)], path)


def onnx_attention(w, cell, q: str, k: str, v: str, tgt: int, src: int, path: str,
                   causal: bool, mask: str | None = None) -> tuple[str, str]:
    """(output (N, L, E), per-head weights (N, H, L, S)) of `cell` on batch-first inputs;
    `mask`, if given, is added to the scaled scores (it broadcasts to (N, H, L, S))."""
    e, h = cell.embed_dim, cell.num_heads
    d = e // h
    b = None if cell.in_proj_bias is None else cell.in_proj_bias.asnumpy()
    if cell._qkv_same_embed_dim:
        full = cell.in_proj_weight.asnumpy()
        weights = (full[:e], full[e:2 * e], full[2 * e:])
    else:
        weights = tuple(p.asnumpy() for p in (cell.q_proj_weight, cell.k_proj_weight,
                                              cell.v_proj_weight))
    heads = _shape(w, f"{path}/heads_shape", [0, 0, h, d])
    parts = []
    for i, (name, x) in enumerate((("q", q), ("k", k), ("v", v))):
        bias = None if b is None else b[i * e:(i + 1) * e]
        projected = _project(w, x, weights[i], bias, f"{path}/{name}_proj")
        split = w._op("Reshape", [projected, heads], f"{path}/{name}_heads")
        perm = [0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]
        parts.append(w._op("Transpose", [split], f"{path}/{name}_t", perm=perm))
    qh, kt, vh = parts
    scores = w._op("MatMul", [qh, kt], f"{path}/scores")
    scores = w._op("Mul", [scores, _const(w, f"{path}/scale", np.float32(1 / math.sqrt(d)))],
                   f"{path}/scaled")
    if causal:
        causal_mask = np.where(np.triu(np.ones((tgt, src), bool), 1), -np.inf, 0.0)
        scores = w._op("Add", [scores, _const(w, f"{path}/causal", causal_mask)],
                       f"{path}/masked")
    if mask is not None:
        scores = w._op("Add", [scores, mask], f"{path}/masked_by_ports")
    probs = w._op("Softmax", [scores], f"{path}/weights", axis=-1)
    mixed = w._op("MatMul", [probs, vh], f"{path}/mixed")
    mixed = w._op("Transpose", [mixed], f"{path}/mixed_t", perm=[0, 2, 1, 3])
    merged = w._op("Reshape", [mixed, _shape(w, f"{path}/merged_shape", [0, 0, e])],
                   f"{path}/merged")
    out_b = None if cell.out_proj.bias is None else cell.out_proj.bias.asnumpy()
    return _project(w, merged, cell.out_proj.weight.asnumpy(), out_b, f"{path}/out_proj"), probs


def _batch_first(w, x: str, batch_first: bool, path: str) -> str:
    return x if batch_first else w._op("Transpose", [x], path, perm=[1, 0, 2])


def _length(shape: tuple, batch_first: bool) -> int:
    size = shape[_time(batch_first)]
    if not isinstance(size, int):
        raise ExportError(f"attention needs a known sequence length to export, got {shape}")
    return size


def _onnx_masks(w, given: dict, path: str) -> str | None:
    """The ports' masks as one additive float tensor broadcasting to (N, heads, L, S):
    attn_mask (N, L, S) → (N, 1, L, S), key_padding_mask (N, S) → (N, 1, 1, S)."""
    parts = []
    for port, axes in (("attn_mask", [1]), ("key_padding_mask", [1, 2])):
        if port in given:
            axes_name = _shape(w, f"{path}/{port}_axes", axes)
            parts.append(w._op("Unsqueeze", [given[port][0], axes_name], f"{path}/{port}"))
    if len(parts) == 2:
        return w._op("Add", parts, f"{path}/masks")
    return parts[0] if parts else None


def _onnx_mha(w, node, cell, args, path: str) -> list[str]:
    ports = getattr(args, "ports", MHA_PORTS[:len(args)])
    given = dict(zip(ports, args, strict=True))
    q = given["query"]
    k = given.get("key", q)
    v = given.get("value", k)
    bf = cell.batch_first
    qn = _batch_first(w, q[0], bf, f"{path}/q_bf")
    kn = qn if k is q else _batch_first(w, k[0], bf, f"{path}/k_bf")
    vn = kn if v is k else _batch_first(w, v[0], bf, f"{path}/v_bf")
    names = (qn, kn, vn)
    out, probs = onnx_attention(w, cell, *names, _length(q[1], bf), _length(k[1], bf), path,
                                cell.causal, _onnx_masks(w, given, path))
    if not bf:
        out = w._op("Transpose", [out], f"{path}/out_tbf", perm=[1, 0, 2])
    out = w._op("Identity", [out], f"{path}/output")
    if cell.average_attn_weights:
        probs = w._op("ReduceMean", [probs], f"{path}/weights_mean", axes=[1], keepdims=0)
    return [out, w._op("Identity", [probs], f"{path}/weights_out")]


def _layer_norm(w, norm, x: str, path: str) -> str:
    gamma = _const(w, f"{path}.gamma", norm.gamma.asnumpy())
    beta = _const(w, f"{path}.beta", norm.beta.asnumpy())
    return w._op("LayerNormalization", [x, gamma, beta], path, axis=-1,
                 epsilon=float(norm.epsilon))


def _feed_forward(w, layer, x: str, path: str) -> str:
    d1, d2 = layer.dense1, layer.dense2
    hidden = _project(w, x, d1.weight.asnumpy(), d1.bias.asnumpy(), f"{path}.dense1")
    if layer.activation_name == "relu":
        hidden = w._op("Relu", [hidden], f"{path}/relu")
    elif layer.activation_name == "gelu":
        inner = w._op("Erf", [w._op("Mul", [hidden, _const(w, f"{path}/rsqrt2",
                                                           np.float32(1 / math.sqrt(2)))],
                                    f"{path}/gelu_scaled")], f"{path}/gelu_erf")
        plus = w._op("Add", [inner, _const(w, f"{path}/one", np.float32(1))], f"{path}/gelu_1")
        half = w._op("Mul", [hidden, _const(w, f"{path}/half", np.float32(0.5))],
                     f"{path}/gelu_half")
        hidden = w._op("Mul", [half, plus], f"{path}/gelu")
    else:
        raise ExportError(f"Node {path}: the activation {layer.activation_name} has no ONNX "
                          "export here.")
    return _project(w, hidden, d2.weight.asnumpy(), d2.bias.asnumpy(), f"{path}.dense2")


def _residual(w, x: str, block, norm, norm_first: bool, path: str) -> str:
    """x + block(norm(x)) (pre-LN) or norm(x + block(x)) (post-LN)."""
    if norm_first:
        return w._op("Add", [x, block(_layer_norm(w, norm, x, f"{path}.norm"))], f"{path}/sum")
    return _layer_norm(w, norm, w._op("Add", [x, block(x)], f"{path}/sum"), f"{path}.norm")


def onnx_layer(w, layer, x: str, length: int, path: str, causal: bool,
               memory: tuple[str, int] | None = None) -> str:
    """One encoder (or, with `memory`, decoder) layer on a batch-first sequence."""
    def self_attention(y: str) -> str:
        return onnx_attention(w, layer.self_attn, y, y, y, length, length,
                              f"{path}.self_attn", causal)[0]

    x = _residual(w, x, self_attention, layer.norm1, layer.norm_first, f"{path}.sa")
    norms = [layer.norm2]
    if memory is not None:
        mem, mem_length = memory

        def cross(y: str) -> str:
            return onnx_attention(w, layer.multihead_attn, y, mem, mem, length, mem_length,
                                  f"{path}.multihead_attn", False)[0]

        x = _residual(w, x, cross, layer.norm2, layer.norm_first, f"{path}.mha")
        norms = [layer.norm3]
    return _residual(w, x, lambda y: _feed_forward(w, layer, y, path), norms[0],
                     layer.norm_first, f"{path}.ff")


def _onnx_encoder_layer(w, node, cell, args, path: str) -> list[str]:
    (x, shape), bf = args[0], cell.batch_first
    out = onnx_layer(w, cell, _batch_first(w, x, bf, f"{path}/in_bf"), _length(shape, bf),
                     path, cell.causal)
    return [_batch_first(w, out, bf, f"{path}/out_tbf") if not bf else
            w._op("Identity", [out], f"{path}/out")]


def _onnx_encoder(w, node, cell, args, path: str) -> list[str]:
    (x, shape), bf = args[0], cell.batch_first
    out = _batch_first(w, x, bf, f"{path}/in_bf")
    for i, layer in enumerate(cell.layers):
        out = onnx_layer(w, layer, out, _length(shape, bf), f"{path}.layers.{i}", cell.causal)
    if cell.norm is not None:
        out = _layer_norm(w, cell.norm, out, f"{path}.norm")
    return [_batch_first(w, out, bf, f"{path}/out_tbf") if not bf else
            w._op("Identity", [out], f"{path}/out")]


def _onnx_decoder_layer(w, node, cell, args, path: str) -> list[str]:
    (tgt, tgt_shape), (mem, mem_shape) = args
    bf = cell.batch_first
    memory = (_batch_first(w, mem, bf, f"{path}/mem_bf"), _length(mem_shape, bf))
    out = onnx_layer(w, cell, _batch_first(w, tgt, bf, f"{path}/tgt_bf"),
                     _length(tgt_shape, bf), path, cell.causal, memory)
    return [_batch_first(w, out, bf, f"{path}/out_tbf") if not bf else
            w._op("Identity", [out], f"{path}/out")]


ONNX: dict[str, OnnxRule] = {
    "MultiheadAttention": _onnx_mha,
    "TransformerEncoderLayer": _onnx_encoder_layer,
    "TransformerEncoder": _onnx_encoder,
    "TransformerDecoderLayer": _onnx_decoder_layer,
}
