"""`tf.keras.optimizers`: not supported. TF's are TF2 OptimizerV2 objects, which
tensorweave (TF1 graph mode) does not implement; every attribute access says what to
use instead."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        "tf.keras.optimizers.%s is not supported by tensorweave (Keras OptimizerV2); use "
        "the TF1 optimizers of tf.train instead, e.g. tf.train.AdamOptimizer(learning_rate)"
        ".minimize(loss, var_list=model.trainable_variables)" % name)
