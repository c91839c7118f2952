"""The tf.keras namespace: loaded on first access (not by `import tensorweave`), and the
names TF1-era programs use are there."""
import subprocess
import sys

import tensorweave as tf


def test_keras_is_imported_on_first_access():
    code = ("import sys, tensorweave as tf\n"
            "assert 'tensorweave.keras' not in sys.modules\n"
            "tf.keras.layers.Dense\n"
            "assert 'tensorweave.keras' in sys.modules\n"
            "from tensorweave.keras.layers import Conv2D\n"
            "assert Conv2D is tf.keras.layers.Conv2D\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_exported_names():
    K = tf.keras
    for name in ("Model", "Sequential", "Input", "layers", "initializers", "regularizers",
                 "activations", "constraints", "backend", "losses", "models"):
        assert hasattr(K, name), name
    for name in ("Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose",
                 "SeparableConv1D", "SeparableConv2D", "Convolution2D", "MaxPooling1D",
                 "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
                 "AveragePooling3D", "MaxPool2D", "AvgPool2D", "GlobalAveragePooling1D",
                 "GlobalAveragePooling2D", "GlobalAveragePooling3D", "GlobalMaxPooling1D",
                 "GlobalMaxPooling2D", "GlobalMaxPooling3D", "GlobalAvgPool2D", "Flatten",
                 "Dropout", "BatchNormalization", "Embedding", "Activation", "Reshape",
                 "Lambda", "Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum",
                 "Minimum", "InputLayer", "Input", "Layer", "InputSpec", "concatenate", "add",
                 "subtract", "multiply", "average", "maximum", "minimum", "ReLU", "LeakyReLU",
                 "ELU", "Softmax", "Permute", "RepeatVector", "ZeroPadding2D", "Cropping2D",
                 "UpSampling2D"):
        assert hasattr(K.layers, name), name
    assert K.models.Model is K.Model and K.models.Sequential is K.Sequential
    assert K.layers.Input is K.Input
    for name in ("learning_phase", "set_learning_phase", "learning_phase_scope", "get_session",
                 "set_session", "clear_session", "floatx", "epsilon", "image_data_format",
                 "function", "get_value", "set_value", "variable", "placeholder", "sum",
                 "mean", "categorical_crossentropy", "int_shape"):
        assert hasattr(K.backend, name), name
    for name in ("mean_squared_error", "mse", "categorical_crossentropy",
                 "sparse_categorical_crossentropy", "binary_crossentropy", "get", "Loss",
                 "MeanSquaredError", "CategoricalCrossentropy", "Huber"):
        assert hasattr(K.losses, name), name
    assert not hasattr(tf.layers, "Embedding")  # Keras names stay in tf.keras
    assert isinstance(K.layers.Dense(1), K.layers.Layer)


def test_utils():
    import numpy as np
    K = tf.keras
    np.testing.assert_array_equal(K.utils.to_categorical([[1], [0], [2]]), np.eye(3)[[1, 0, 2]])
    assert K.utils.to_categorical([1, 0], num_classes=4).shape == (2, 4)
    # TF 2.15's to_ordinal: class c as c ones of num_classes - 1 entries
    assert K.utils.to_ordinal([[1], [0], [3]]).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                                                           [1.0, 1.0, 1.0]]
    ints = K.utils.to_ordinal([2, 0], 4, dtype="int32")
    assert ints.dtype == np.int32 and ints.tolist() == [[1, 1, 0], [0, 0, 0]]
    assert K.utils.to_ordinal([[0, 1], [2, 1]]).shape == (2, 2, 2)
    np.testing.assert_allclose(K.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])),
                               [[0.6, 0.8], [0.0, 0.0]])
    with tf.Graph().as_default():
        inp = K.Input((2,))
        assert K.utils.get_source_inputs(K.layers.Dense(2)(inp)) == [inp]
