"""String ops, decode_csv and decode_raw.

Importing the package registers every op of the family (its modules, in order).
"""
from tensorweave.ops.string import (  # noqa: F401
    string_ops, string_decode_ops, string_case_ops, string_ngram_ops,
    string_unicode_ops, string_hash_ops)
