"""`tf.app.run`: TF1's program entry point, on absl-py's `app.run`."""
from __future__ import annotations

import sys
from typing import Callable, List, Optional

from tensorweave.framework.api_export import tf_export


def _parse_flags_tolerating_unknown(argv: List[str]) -> List[str]:
    """Parses the defined flags out of `argv`; the program name, positional arguments and
    flags nobody defined are returned, for `main`."""
    from absl import flags
    return flags.FLAGS(argv, known_only=True)


@tf_export("app.run")
def run(main: Optional[Callable] = None, argv: Optional[List[str]] = None):
    """Parses flags from `argv` (default `sys.argv`), runs `main(remaining argv)` and
    exits the process with its return value, as TF1's `tf.app.run` did through absl.

    Args:
      main: the program's main function; by default `main` of the `__main__` module.
      argv: the command line, program name first; by default `sys.argv`.

    Flags that were never defined are not an error here: they stay in the argv given
    to `main`, as in TF1. Reading `tf.flags.FLAGS` outside `run` is stricter.
    """
    from absl import app
    if main is None:
        main = sys.modules["__main__"].main
    app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerating_unknown)
