"""tf.saved_model: TF1's SavedModel, the directory format TensorFlow Serving and other
TensorFlow programs load a trained model from (variables, assets, and MetaGraphDefs
with tags and signatures).

  constants.py         file names, collection keys, tag and signature constants
  signatures.py        TensorInfo / SignatureDef builders and checks
  builder.py           SavedModelBuilder, simple_save, main ops
  loader.py            load, maybe_saved_model_directory
  saved_model_file.py  the SavedModel message and the directory's paths

Imported on first access of `tf.saved_model` (tensorweave/__init__.py), so `import
tensorweave` does not pay for it.
"""
from tensorweave.saved_model import builder, constants, loader, signatures  # noqa: F401

import sys as _sys  # noqa: E402

from tensorweave.framework import api_export as _api  # noqa: E402

# the names are offered to `from tensorweave.saved_model import ...` before `tf.saved_model` is touched
_api.install_namespace(_sys.modules[__name__], "saved_model")
