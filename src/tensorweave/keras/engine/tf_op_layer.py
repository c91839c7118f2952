"""TensorFlowOpLayer: one raw TF op met between Keras tensors, as a layer that a
functional Model can call again on new inputs (it builds the same op, with the same
attrs, on them). Named 'tf_op_layer_<op name>' as TF names it."""
from __future__ import annotations

import tensorweave as tf
from tensorweave.framework.op_builder import infer_shapes
from tensorweave.keras.engine import base_layer

# ops whose copy would need the rest of their control-flow construct
_CONTROL_FLOW_OPS = frozenset({"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter",
                               "Exit", "RefExit", "NextIteration", "RefNextIteration",
                               "LoopCond"})


class TensorFlowOpLayer(base_layer.Layer):
    """Wraps the op `op`: `call(inputs)` builds an op of the same type and attrs whose
    inputs are `inputs` (the op's inputs that come from Keras tensors, in order) and
    `constants` (index -> tensor, the others, reused as they are).

    Raises:
      ValueError: a control-flow op (wrap such code in a Lambda layer).
    """

    def __init__(self, op, constants=None, name=None, **kwargs):
        if op.type in _CONTROL_FLOW_OPS:
            raise ValueError("The TF op %s (%s) between Keras tensors is part of a control-flow "
                             "construct, which Keras cannot wrap automatically; wrap the code "
                             "in a tf.keras.layers.Lambda layer" % (op.name, op.type))
        super().__init__(name="tf_op_layer_" + (name or op.name), **kwargs)
        self.built = True
        self._op = op
        self._constants = dict(constants or {})

    def call(self, inputs):
        remaining = iter(tf.nest.flatten(inputs))
        op = self._op
        values = [self._constants[i] if i in self._constants else next(remaining)
                  for i in range(len(op.inputs))]
        attrs = {k: v for k, v in op.attrs.items() if k != "_class"}
        new_op = tf.get_default_graph().create_op(
            op.type, values, dtypes=[t.dtype for t in op.outputs], attrs=attrs,
            op_def=op.op_def, name=op.name.split("/")[-1])
        infer_shapes(new_op)
        outputs = new_op.outputs
        return outputs[0] if len(outputs) == 1 else outputs
