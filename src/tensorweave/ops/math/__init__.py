"""Math ops: elementwise unary and binary math, reductions, scans, matmul and einsum,
segment reductions, special functions (tf.math.special), clipping, bitwise ops,
quantization (fake_quant_ops, quantize_ops, quantize_dequantize_ops, and the quantized
inference arithmetic of quantized_math_ops), FFTs
(spectral_fft_ops), DCTs and mel transforms (spectral_transforms) and the rest of
tf.signal (signal_ops); undoing broadcasting in gradients (math_grad_util).

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.math import (  # noqa: F401
    math_grad_util, math_unary, math_binary, math_ops, reduction_ops, reduction_grad,
    scan_ops, matmul_ops, einsum_ops, segment_ops, clip_ops, confusion_matrix,
    special_math_ops, special_functions, complex_ops, misc_math_ops, incomplete_special_ops,
    spectral_fft_ops, histogram_ops, signal_ops, spectral_transforms, bitwise_ops,
    fake_quant_ops, quantize_ops, quantize_dequantize_ops, quantized_math_ops)
