"""The Keras engine: the base Layer (base_layer.py) and its input checks
(input_spec.py), Keras history of tensors (node.py) and raw-op layers (tf_op_layer.py),
Input (input_layer.py), Model (training.py) with its functional graph (functional.py)
and summary (summary.py), Sequential (sequential.py); the training loop of Model:
compile, fit, evaluate, predict (training_v1.py), the endpoints, losses and metrics
compile builds (compile_utils.py), the batch loop (training_arrays.py) and the checks
of NumPy data (training_utils.py)."""
