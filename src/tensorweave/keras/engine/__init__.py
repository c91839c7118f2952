"""The Keras engine: the base Layer (base_layer.py) and its input checks
(input_spec.py), Keras history of tensors (node.py) and raw-op layers (tf_op_layer.py),
Input (input_layer.py), Model (training.py) with its functional graph (functional.py)
and summary (summary.py), Sequential (sequential.py)."""
