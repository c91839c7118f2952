"""`tf.nn`: filled from the export table (framework/api_export.py) by tensorweave's
__init__; layers built from ops (rnn cells, dynamic_rnn) live in this package."""
