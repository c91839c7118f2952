"""`tf.keras.models`: Model and Sequential (exported from the engine); the saving and
loading functions of this namespace are not supported."""
from __future__ import annotations

from tensorweave.framework.api_export import tf_export


def _unsupported(name: str):
    def raise_unsupported(*args, **kwargs):
        raise NotImplementedError(
            "tf.keras.models.%s is not supported by tensorweave (no Keras model saving or "
            "serialization): save and restore the variables with tf.train.Saver("
            "model.variables), and rebuild the model in code" % name)
    raise_unsupported.__name__ = name
    raise_unsupported.__doc__ = "Not supported: raises NotImplementedError."
    return tf_export("keras.models." + name)(raise_unsupported)


load_model = _unsupported("load_model")
save_model = _unsupported("save_model")
model_from_config = _unsupported("model_from_config")
model_from_json = _unsupported("model_from_json")
model_from_yaml = _unsupported("model_from_yaml")
clone_model = _unsupported("clone_model")
