"""`tf.train`: optimizers, Saver, schedules and global-step helpers. Public names are
filled from the export table (framework/api_export.py) by tensorweave's __init__."""
import importlib

MODULES = ("optimizer", "optimizers", "optimizers_adaptive", "learning_rate_decay",
           "training_util", "meta_graph", "checkpoint_utils", "saver", "coordinator",
           "queue_runner", "input", "moving_averages", "session_run_hook",
           "basic_session_run_hooks", "session_manager", "monitored_session", "supervisor",
           "warm_starting", "device_setter", "sync_replicas_optimizer", "sdca_ops",
           "loss_scale", "loss_scale_optimizer", "apply_ops", "checkpoint",
           "checkpoint_manager")


def load_all() -> None:
    for name in MODULES:
        importlib.import_module("tensorweave.train." + name)
