"""tf.saved_model: TF1's SavedModel, the directory format TensorFlow Serving and other
TensorFlow programs load a trained model from (variables, assets, and MetaGraphDefs
with tags and signatures).

  names.py             file names, collection keys, tag and signature constants
  signatures.py        TensorInfo / SignatureDef builders and checks
  writer.py            SavedModelBuilder, simple_save, main ops
  reader.py            load, maybe_saved_model_directory
  saved_model_file.py  the SavedModel message and the directory's paths

TF1's namespaces tf.saved_model.builder, .loader, .constants, .utils, ... are made from
the exports (api_export.install_namespace), so they hold TF's names only; the modules
above are named for their job, not after those namespaces.

Imported on first access of `tf.saved_model` (tensorweave/__init__.py), so `import
tensorweave` does not pay for it.
"""
from tensorweave.saved_model import names, reader, signatures, writer  # noqa: F401

import sys as _sys  # noqa: E402

from tensorweave.framework import api_export as _api  # noqa: E402

# the names are offered to `from tensorweave.saved_model import ...` before `tf.saved_model` is touched
_api.install_namespace(_sys.modules[__name__], "saved_model")
