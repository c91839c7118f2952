"""The program surface TF1 programs start with: `tf.app`, `tf.flags`, `tf.logging`,
`tf.gfile` / `tf.io.gfile`. Third-party libraries (absl-py, fsspec) are imported on first
use, so `import tensorweave` stays fast."""
from tensorweave.platform import app, file_io, flags, gfile, resource_loader, tf_logging  # noqa
