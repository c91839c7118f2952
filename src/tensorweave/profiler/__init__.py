"""`tf.profiler`: TF1's model analysis (profile, ProfileOptionBuilder: FLOPs and
parameters by name scope or op type, time and bytes from a traced run's RunMetadata),
tfprof's op log (write_op_log, OpLogProto) and advisor (advise, AdviceProto), and
tensorweave's per-op summaries of traced steps (OpProfile: top ops by time and
bytes as a table, and folded stacks for flame graphs).

Imported on first access to `tf.profiler` (tensorweave.__getattr__)."""
import sys as _sys

from tensorweave.framework import api_export as _api
from tensorweave.profiler import model_analyzer, option_builder  # noqa: F401
from tensorweave.profiler import advisor, tfprof_logger  # noqa: F401
from tensorweave.profiler.advisor import AdviceProto, advise  # noqa: F401
from tensorweave.profiler.model_analyzer import (  # noqa: F401
    GraphNodeProto, MultiGraphNodeProto, Profiler, profile)
from tensorweave.profiler.tfprof_logger import OpLogProto, write_op_log  # noqa: F401
from tensorweave.profiler.op_profile import OpProfile, OpStats, step_op_stats  # noqa: F401
from tensorweave.profiler.option_builder import ProfileOptionBuilder  # noqa: F401

# Bind the package on its parent before installing (as tensorweave.losses does).
setattr(_sys.modules["tensorweave"], "profiler", _sys.modules[__name__])
_api.install(_sys.modules["tensorweave"])
