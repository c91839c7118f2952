"""`tf.nn`: filled from the export table (framework/api_export.py) by tensorweave's
__init__; layers built from ops (rnn cells, dynamic_rnn) live in this package."""

# rnn_cell_impl before rnn: rnn builds on the cells
from tensorweave.nn import rnn_cell_impl  # noqa: E402,F401
from tensorweave.nn import rnn_cell_wrappers  # noqa: E402,F401
from tensorweave.nn import rnn  # noqa: E402,F401
