#!/usr/bin/python3
"""Dynamic int8 quantization of an fp32 ONNX graph, written node for node as
onnxruntime.quantization.quantize_dynamic emits it (weight_type QInt8,
uint8 activations), with onnx + numpy only (Debian packages no
onnxruntime):

    A -> DynamicQuantizeLinear -> (A_q, A_scale, A_zp)
    MatMulInteger(A_q, W_q, A_zp, W_zp) -> Cast(float) -> Mul(A_scale * W_scale)

ONNX Runtime fuses this into DynamicQuantizeMatMul. Weights are symmetric
int8 with zero point 0: one scale per tensor (quantize_dynamic's default), or
one per output column with --per-channel. Every MatMul whose B is a constant
(directly, or through a Transpose of one) and every Gemm is quantized, so
each linear layer of the model is; a Gemm's bias becomes a following Add.
The token embedding (a Gather) stays fp32: a row lookup costs nothing.

    quantize_int8.py IN.onnx OUT.onnx [--per-channel]
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--per-channel", action="store_true")
    args = ap.parse_args()

    model = onnx.load(args.src)
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    # Constant nodes count as initializers (torch emits a few).
    consts = {}
    for n in graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    producers = {o: n for n in graph.node for o in n.output}
    uses = {}
    for n in graph.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1

    def constant(name):
        if name in inits:
            return numpy_helper.to_array(inits[name])
        if name in consts:
            return consts[name]
        return None

    def weight_of(name):
        """The [K, N] weight behind a MatMul's B, or None if B is computed."""
        value = constant(name)
        if value is not None:
            return value
        node = producers.get(name)
        if node is not None and node.op_type == "Transpose":
            value = constant(node.input[0])
            perm = [a.ints for a in node.attribute if a.name == "perm"]
            if value is not None and value.ndim == 2 and (not perm or list(perm[0]) == [1, 0]):
                return value.T
        return None

    new_nodes, new_inits = [], []
    quantized = skipped = 0
    dq_of = {}  # one DynamicQuantizeLinear per activation, shared as ORT does

    def quantize_activation(a):
        if a not in dq_of:
            base = a.replace("/", "_").strip("_") + "_dq"
            outs = [f"{base}_quantized", f"{base}_scale", f"{base}_zero_point"]
            new_nodes.append(helper.make_node("DynamicQuantizeLinear", [a], outs, name=base))
            dq_of[a] = outs
        return dq_of[a]

    for node in graph.node:
        a = w = bias = None
        if node.op_type == "MatMul":
            a, w = node.input[0], weight_of(node.input[1])
        elif node.op_type == "Gemm":
            attrs = {x.name: helper.get_attribute_value(x) for x in node.attribute}
            w = weight_of(node.input[1])
            if w is not None and attrs.get("transA", 0) == 0 and attrs.get("alpha", 1.0) == 1.0:
                a = node.input[0]
                if attrs.get("transB", 0):
                    w = w.T
                if len(node.input) > 2 and node.input[2]:
                    bias = constant(node.input[2])
                    if bias is None or attrs.get("beta", 1.0) != 1.0:
                        w = None
            else:
                w = None
        if w is None or w.ndim != 2 or w.dtype != np.float32:
            # A linear layer left fp32 would make the comparison unfair: say so.
            if node.op_type == "Gemm" or (node.op_type == "MatMul" and constant(node.input[1]) is not None):
                skipped += 1
            new_nodes.append(node)
            continue

        name = (node.name or node.output[0]).replace("/", "_").strip("_")
        if args.per_channel:
            absmax = np.abs(w).max(axis=0)
        else:
            absmax = np.array(np.abs(w).max())
        scale = np.where(absmax > 0, absmax / 127.0, 1.0).astype(np.float32)
        w_q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        zero = np.zeros(scale.shape, dtype=np.int8)
        new_inits += [numpy_helper.from_array(w_q, f"{name}_W_quantized"),
                      numpy_helper.from_array(scale, f"{name}_W_scale"),
                      numpy_helper.from_array(zero, f"{name}_W_zero_point")]
        a_q, a_scale, a_zp = quantize_activation(a)
        out = node.output[0]
        product = out if bias is None else f"{name}_without_bias"
        new_nodes += [
            helper.make_node("MatMulInteger", [a_q, f"{name}_W_quantized", a_zp, f"{name}_W_zero_point"],
                             [f"{name}_output_quantized"], name=f"{name}_quant"),
            helper.make_node("Cast", [f"{name}_output_quantized"], [f"{name}_output_quantized_cast_output"],
                             to=TensorProto.FLOAT, name=f"{name}_output_quantized_cast"),
            helper.make_node("Mul", [a_scale, f"{name}_W_scale"], [f"{name}_scales_mul:0"], name=f"{name}_scales_mul"),
            helper.make_node("Mul", [f"{name}_output_quantized_cast_output", f"{name}_scales_mul:0"], [product],
                             name=f"{name}_output_scale_mul"),
        ]
        if bias is not None:
            new_inits.append(numpy_helper.from_array(bias.astype(np.float32), f"{name}_bias"))
            new_nodes.append(helper.make_node("Add", [product, f"{name}_bias"], [out], name=f"{name}_bias_add"))
        quantized += 1

    del graph.node[:]
    graph.node.extend(new_nodes)
    # Drop initializers (and Transposes of them) no node reads any more.
    graph.initializer.extend(new_inits)
    for _ in range(2):
        used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
        keep_nodes = [n for n in graph.node if any(o in used for o in n.output) or not n.output]
        del graph.node[:]
        graph.node.extend(keep_nodes)
    used = {i for n in graph.node for i in n.input}
    keep = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    # ONNX Runtime's contrib fusions register under com.microsoft; opset of the default domain is kept.
    onnx.checker.check_model(model)
    onnx.save(model, args.dst)
    print(f"wrote {args.dst}: {quantized} linear layers int8 ({'per channel' if args.per_channel else 'per tensor'})"
          + (f", {skipped} left fp32" if skipped else ""), file=sys.stderr)
    if quantized == 0:
        sys.exit("no linear layer found to quantize")


if __name__ == "__main__":
    main()
