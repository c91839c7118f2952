"""`tf.profiler.ProfileOptionBuilder`: the option dicts tf.profiler.profile reads, with
TF1's keys, defaults and presets."""
from __future__ import annotations

import copy

from tensorweave.framework.api_export import tf_export

_DEFAULTS = {"max_depth": 100, "min_bytes": 0, "min_micros": 0, "min_params": 0,
             "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
             "account_type_regexes": [".*"], "start_name_regexes": [".*"],
             "trim_name_regexes": [], "show_name_regexes": [".*"],
             "hide_name_regexes": [], "account_displayed_op_only": False,
             "select": ["micros"], "step": -1, "output": "stdout"}


@tf_export("profiler.ProfileOptionBuilder")
class ProfileOptionBuilder:
    """Builds profiling options (TF1's tf.profiler.ProfileOptionBuilder).

    Args:
      options: an option dict to start from (default: TF's defaults).
    """

    def __init__(self, options=None):
        self._options = copy.deepcopy(options if options is not None else _DEFAULTS)

    @staticmethod
    def trainable_variables_parameter() -> dict:
        """Options that count the parameters of trainable variables, per name scope."""
        return {"max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0,
                "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
                "account_type_regexes": ["_trainable_variables"],
                "start_name_regexes": [".*"], "trim_name_regexes": [],
                "show_name_regexes": [".*"], "hide_name_regexes": [],
                "account_displayed_op_only": True, "select": ["params"], "step": -1,
                "output": "stdout"}

    @staticmethod
    def float_operation() -> dict:
        """Options that count the floating-point operations of ops (TF1's counting
        rules: only op types with a registered flops statistic count)."""
        return {"max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0,
                "min_float_ops": 1, "min_occurrence": 0, "order_by": "float_ops",
                "account_type_regexes": [".*"], "start_name_regexes": [".*"],
                "trim_name_regexes": [], "show_name_regexes": [".*"],
                "hide_name_regexes": [], "account_displayed_op_only": True,
                "select": ["float_ops"], "step": -1, "output": "stdout"}

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0) -> dict:
        """Options that show execution time and memory of the ops of a traced run
        (profile(..., run_meta=...))."""
        return {"max_depth": 10000, "min_bytes": min_bytes,
                "min_peak_bytes": min_peak_bytes, "min_residual_bytes": min_residual_bytes,
                "min_output_bytes": min_output_bytes, "min_micros": min_micros,
                "min_accelerator_micros": min_accelerator_micros,
                "min_cpu_micros": min_cpu_micros, "min_params": 0, "min_float_ops": 0,
                "min_occurrence": 0, "order_by": "micros",
                "account_type_regexes": [".*"], "start_name_regexes": [".*"],
                "trim_name_regexes": [], "show_name_regexes": [".*"],
                "hide_name_regexes": [], "account_displayed_op_only": True,
                "select": ["micros", "bytes"], "step": -1, "output": "stdout"}

    def build(self) -> dict:
        """A copy of the options built so far."""
        return copy.deepcopy(self._options)

    def with_max_depth(self, max_depth):
        self._options["max_depth"] = max_depth
        return self

    def with_min_memory(self, min_bytes=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0):
        self._options.update(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                             min_residual_bytes=min_residual_bytes,
                             min_output_bytes=min_output_bytes)
        return self

    def with_min_execution_time(self, min_micros=0, min_accelerator_micros=0,
                                min_cpu_micros=0):
        self._options.update(min_micros=min_micros,
                             min_accelerator_micros=min_accelerator_micros,
                             min_cpu_micros=min_cpu_micros)
        return self

    def with_min_parameters(self, min_params):
        self._options["min_params"] = min_params
        return self

    def with_min_occurrence(self, min_occurrence):
        self._options["min_occurrence"] = min_occurrence
        return self

    def with_min_float_operations(self, min_float_ops):
        self._options["min_float_ops"] = min_float_ops
        return self

    def with_accounted_types(self, account_type_regexes):
        self._options["account_type_regexes"] = copy.copy(account_type_regexes)
        return self

    def with_node_names(self, start_name_regexes=None, show_name_regexes=None,
                        hide_name_regexes=None, trim_name_regexes=None):
        for key, value in (("start_name_regexes", start_name_regexes),
                           ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes),
                           ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = copy.copy(value)
        return self

    def account_displayed_op_only(self, is_true):
        self._options["account_displayed_op_only"] = is_true
        return self

    def with_empty_output(self):
        self._options["output"] = "none"
        return self

    def with_stdout_output(self):
        self._options["output"] = "stdout"
        return self

    def with_file_output(self, outfile):
        self._options["output"] = "file:outfile=%s" % outfile
        return self

    def with_timeline_output(self, timeline_file):
        self._options["output"] = "timeline:outfile=%s" % timeline_file
        return self

    def with_pprof_output(self, pprof_file):
        self._options["output"] = "pprof:outfile=%s" % pprof_file
        return self

    def order_by(self, attribute):
        self._options["order_by"] = attribute
        return self

    def select(self, attributes):
        self._options["select"] = copy.copy(attributes)
        return self

    def with_step(self, step):
        self._options["step"] = step
        return self
