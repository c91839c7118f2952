"""The names a SavedModel directory is made of, and its tag and signature constants
(TF1 `tf.saved_model.constants`, `tag_constants`, `signature_constants`)."""
from tensorweave.framework.api_export import export

# -- files and collections (tf.saved_model.constants) --
SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"          # the collection of AssetFileDef `Any`s
ASSET_FILE_DEF_TYPE_URL = "type.googleapis.com/tensorflow.AssetFileDef"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
TRAIN_OP_KEY = "saved_model_train_op"
# signature keys a builder reserves for its init and train ops (TF2's builder writes
# them; loaders look there first)
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"

for _name in ("SAVED_MODEL_SCHEMA_VERSION", "SAVED_MODEL_FILENAME_PB",
              "SAVED_MODEL_FILENAME_PBTXT", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME",
              "ASSETS_DIRECTORY", "ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB",
              "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY"):
    export(globals()[_name], "saved_model." + _name, "saved_model.constants." + _name)

# -- tags of a MetaGraphDef (tf.saved_model.tag_constants) --
SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
for _name in ("SERVING", "TRAINING", "GPU", "TPU"):
    export(globals()[_name], "saved_model." + _name, "saved_model.tag_constants." + _name)

# -- signature keys and method names of TensorFlow Serving (signature_constants) --
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_INPUTS = "inputs"
PREDICT_OUTPUTS = "outputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_INPUTS = "inputs"
REGRESS_OUTPUTS = "outputs"
for _name in ("DEFAULT_SERVING_SIGNATURE_DEF_KEY", "PREDICT_METHOD_NAME", "PREDICT_INPUTS",
              "PREDICT_OUTPUTS", "CLASSIFY_METHOD_NAME", "CLASSIFY_INPUTS",
              "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "REGRESS_METHOD_NAME",
              "REGRESS_INPUTS", "REGRESS_OUTPUTS"):
    export(globals()[_name], "saved_model." + _name,
           "saved_model.signature_constants." + _name)
del _name
