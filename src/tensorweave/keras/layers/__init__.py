"""`tf.keras.layers`: the Keras layers (modules below), the base Layer, InputSpec,
InputLayer and Input. Importing it registers their exports."""
from tensorweave.keras.engine.base_layer import Layer  # noqa: F401
from tensorweave.keras.engine.input_layer import Input, InputLayer  # noqa: F401
from tensorweave.keras.engine.input_spec import InputSpec  # noqa: F401
from tensorweave.keras.layers import (  # noqa: F401
    activation, convolutional, core, embeddings, merge, normalization, pooling, reshaping)
from tensorweave.keras.layers import recurrent, recurrent_cells, wrappers  # noqa: F401
from tensorweave.keras.layers import regularization  # noqa: F401
from tensorweave.keras.layers import (  # noqa: F401
    attention, convolutional_recurrent, einsum_dense, image_preprocessing,
    locally_connected, preprocessing_categorical, preprocessing_normalization)
