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
