"""tf.estimator.ModeKeys: the three modes a model_fn is called in."""
from tensorweave.framework.api_export import tf_export


@tf_export("estimator.ModeKeys")
class ModeKeys:
    """Standard names for model modes: TRAIN (training), EVAL (evaluation), PREDICT
    (inference; its value is TF's "infer")."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"
