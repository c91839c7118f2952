"""MetaGraphDef: export_meta_graph / import_meta_graph."""
from tensorweave.framework.api_export import tf_export  # noqa: F401
